// Minimal perf_event filter: keeps samples with a large period or a data address.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int filter_period(struct bpf_perf_event_data *ctx) {
  if (ctx->sample_period >= 1000) return 1;
  return ctx->addr != 0;
}

char LICENSE[] SEC("license") = "GPL";
