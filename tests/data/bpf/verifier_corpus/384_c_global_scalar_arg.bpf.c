// expect: accept
// why: a global function (BTF_FUNC_GLOBAL) with a scalar argument, verified once on its own
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


__attribute__((noinline)) int scale(__u64 x) {
  return (x & 0xff) * 3;
}

SEC("perf_event")
int global_scalar(struct bpf_perf_event_data *ctx) {
  return scale(ctx->sample_period) > 10;
}

char LICENSE[] SEC("license") = "GPL";
