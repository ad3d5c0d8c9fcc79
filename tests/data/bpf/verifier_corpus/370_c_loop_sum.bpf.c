// expect: accept
// why: bpf_loop with a static callback adding the index into a u64 on the caller's stack
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


static int add_index(__u32 index, void *data) {
  __u64 *sum = data;
  *sum += index;
  return 0;
}

SEC("perf_event")
int loop_sum(struct bpf_perf_event_data *ctx) {
  __u64 sum = ctx->sample_period & 0xff;
  bpf_loop(8, add_index, &sum, 0);
  return sum > 100;
}

char LICENSE[] SEC("license") = "GPL";
