// expect: accept
// why: a callback of 48 bytes of stack below a caller of ~480: 528 in all, accepted because the caller's frame (64 bytes or more) has a private stack (x86-64, 6.13+) and only the callback's counts on the shared one
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


static int fill(__u32 index, void *data) {
  volatile char buf[48];
  buf[index & 31] = 1;
  __u64 *v = data;
  *v += buf[0];
  return 0;
}

SEC("perf_event")
int loop_big_stack(struct bpf_perf_event_data *ctx) {
  volatile char big[472];
  __u64 v = 0;
  big[ctx->sample_period & 255] = 1;
  bpf_loop(2, fill, &v, 0);
  return v + big[3];
}

char LICENSE[] SEC("license") = "GPL";
