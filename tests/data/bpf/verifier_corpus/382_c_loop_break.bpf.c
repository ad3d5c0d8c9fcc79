// expect: accept
// why: the callback stops the loop (returns 1) once its context reaches a threshold
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


static int until(__u32 index, void *data) {
  __u64 *v = data;
  *v += index;
  if (*v > 20)
    return 1;
  return 0;
}

SEC("perf_event")
int loop_break(struct bpf_perf_event_data *ctx) {
  __u64 v = ctx->sample_period & 0xf;
  long n = bpf_loop(100, until, &v, 0);
  return n;
}

char LICENSE[] SEC("license") = "GPL";
