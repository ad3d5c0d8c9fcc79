// Programs in sections other than perf_event: the loader reports libbpf's type for each and
// leaves the decision to the runtime.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_pass(struct xdp_md *ctx) {
  return ctx->data_end > ctx->data ? XDP_PASS : XDP_DROP;
}

SEC("tracepoint/sched/sched_switch")
int on_sched_switch(void *ctx) {
  return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
