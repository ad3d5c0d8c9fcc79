// expect: reject EINVAL
// why: a global function's ctx argument (struct bpf_perf_event_data *) given a pointer to the caller's stack: the call is refused, 'arg#0 expects pointer to ctx'
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

__attribute__((noinline)) int period_of(struct bpf_perf_event_data *c) {
  return c->sample_period > 3;
}

SEC("perf_event")
int global_ctx_stack(struct bpf_perf_event_data *ctx) {
  struct bpf_perf_event_data copy = {};
  copy.sample_period = ctx->sample_period;
  return period_of(&copy);
}

char LICENSE[] SEC("license") = "GPL";
