// expect: accept
// why: bpf_loop called from a static subprogram, its context on the subprogram's stack (the callback is frame 2)
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


static int add(__u32 index, void *data) {
  __u64 *sum = data;
  *sum += index;
  return 0;
}

static __attribute__((noinline)) __u64 sum_to(__u32 n) {
  __u64 sum = 0;
  bpf_loop(n & 0xf, add, &sum, 0);
  return sum;
}

SEC("perf_event")
int loop_in_subprog(struct bpf_perf_event_data *ctx) {
  return sum_to(ctx->sample_period) > 10;
}

char LICENSE[] SEC("license") = "GPL";
