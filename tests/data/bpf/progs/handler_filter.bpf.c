// Overflow-handler fixture: keeps samples whose addr is at least min_addr, counts kept and
// dropped samples, and sends {period, addr, ip} of samples whose addr ends in 0x42 to a
// PERF_EVENT_ARRAY of BPF_OUTPUT events.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 2);
  __type(key, __u32);
  __type(value, __u64);
} counts SEC(".maps");  // [0] kept, [1] dropped

struct {
  __uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, sizeof(__u32));
} events SEC(".maps");

const volatile __u64 min_addr = 0x1000;

struct report {
  __u64 period;
  __u64 addr;
  __u64 ip;
};

SEC("perf_event")
int filter(struct bpf_perf_event_data* ctx) {
  __u32 key = ctx->addr >= min_addr ? 0 : 1;
  __u64* n = bpf_map_lookup_elem(&counts, &key);
  if (n) __sync_fetch_and_add(n, 1);
  if (key == 0 && (ctx->addr & 0xff) == 0x42) {
    struct report r = {ctx->sample_period, ctx->addr, ctx->regs.rip};
    bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, &r, sizeof r);
  }
  return key == 0;
}

char LICENSE[] SEC("license") = "GPL";
