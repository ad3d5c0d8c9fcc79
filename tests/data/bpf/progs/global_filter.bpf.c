// Overflow-handler fixture with global (non-static) functions, which the verifier checks on their
// own from their BTF prototypes but which run as ordinary BPF-to-BPF calls: keeps samples whose
// addr is at least 0x1000, read through a ctx argument into the caller's stack.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

__attribute__((noinline)) int addr_of(struct bpf_perf_event_data *ctx, __u64 *out) {
  if (!out)
    return 0;
  *out = ctx->addr;
  return 1;
}

__attribute__((noinline)) int at_least_page(__u64 addr) {
  return addr >= 0x1000;
}

SEC("perf_event")
int global_filter(struct bpf_perf_event_data *ctx) {
  __u64 addr = 0;
  if (!addr_of(ctx, &addr))
    return 0;
  return at_least_page(addr);
}

char LICENSE[] SEC("license") = "GPL";
