// expect: accept
// why: 8-byte reads of pt_regs fields (rip, rsp) through the ctx
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int regs_ip(struct bpf_perf_event_data *ctx) {
  return ctx->regs.rip > ctx->regs.rsp;
}

char LICENSE[] SEC("license") = "GPL";
