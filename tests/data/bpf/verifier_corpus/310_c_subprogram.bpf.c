// expect: accept
// why: a bpf-to-bpf call to a non-inlined function in .text
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

static __attribute__((noinline)) __u64 mix(__u64 a, __u64 b) {
  return (a ^ (b << 7)) + (b >> 3);
}

SEC("perf_event")
int subprogram(struct bpf_perf_event_data *ctx) {
  return mix(ctx->sample_period, ctx->addr) & 1;
}

char LICENSE[] SEC("license") = "GPL";
