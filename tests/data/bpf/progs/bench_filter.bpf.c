// The sample filter the overflow-handler benchmark attaches: about 20 instructions after ctx
// rewriting, reading sample_period, addr and the ip register; keeps user-text samples with a period
// outside one page.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int sample_filter(struct bpf_perf_event_data* ctx) {
  __u64 period = ctx->sample_period;
  __u64 addr = ctx->addr;
  __u64 ip = ctx->regs.rip;
  if (period == 0) return 0;
  if (ip < 0x400000 || ip >= 0x800000) return 0;
  if ((addr >> 12) == 0x5) return 0;
  return (addr & 0xf) != 0xf;
}

char LICENSE[] SEC("license") = "GPL";
