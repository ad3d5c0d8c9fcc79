// expect: accept
// why: a global function that calls another: each is verified once, on its own, in a later round
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

__attribute__((noinline)) int low_bits(__u64 x) {
  return x & 7;
}

__attribute__((noinline)) int low_bits_of(__u64 *p) {
  if (!p)
    return 0;
  return low_bits(*p) + 1;
}

SEC("perf_event")
int global_nested(struct bpf_perf_event_data *ctx) {
  __u64 v = ctx->sample_period;
  return low_bits_of(&v);
}

char LICENSE[] SEC("license") = "GPL";
