// expect: reject EINVAL
// why: a global function whose r0 at exit is its ctx pointer: 'At subprogram exit the register R0 is not a scalar value (ctx)'
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

__attribute__((noinline)) long ctx_address(struct bpf_perf_event_data *c) {
  return (long)c;
}

SEC("perf_event")
int global_returns_ctx(struct bpf_perf_event_data *ctx) {
  return ctx_address(ctx) != 0;
}

char LICENSE[] SEC("license") = "GPL";
