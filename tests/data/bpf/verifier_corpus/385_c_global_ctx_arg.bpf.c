// expect: accept
// why: a global function whose argument is the program context (struct bpf_perf_event_data *)
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


__attribute__((noinline)) int period_of(struct bpf_perf_event_data *ctx) {
  return ctx->sample_period > 1000;
}

SEC("perf_event")
int global_ctx(struct bpf_perf_event_data *ctx) {
  return period_of(ctx);
}

char LICENSE[] SEC("license") = "GPL";
