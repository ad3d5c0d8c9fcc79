// expect: accept
// why: ctx reads of sample_period and addr, as a sample filter does
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int period_filter(struct bpf_perf_event_data *ctx) {
  if (ctx->sample_period >= 1000) return 1;
  return ctx->addr != 0;
}

char LICENSE[] SEC("license") = "GPL";
