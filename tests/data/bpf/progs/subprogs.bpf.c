// Static __noinline subprograms in .text, two levels deep (mix calls scale twice), shared by two
// programs.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

static __noinline __u64 scale(__u64 value, __u64 shift) {
  return (value << shift) | 1;
}

static __noinline __u64 mix(__u64 period, __u64 addr) {
  return scale(period, 2) ^ scale(addr, 3);
}

static __noinline int is_kept(__u64 value) {
  return (value & 0xf) != 0;
}

SEC("perf_event")
int subprog_filter(struct bpf_perf_event_data *ctx) {
  __u64 mixed = mix(ctx->sample_period, ctx->addr);
  return is_kept(mixed);
}

SEC("perf_event")
int subprog_addr(struct bpf_perf_event_data *ctx) {
  return is_kept(scale(ctx->addr, 1));
}

char LICENSE[] SEC("license") = "GPL";
