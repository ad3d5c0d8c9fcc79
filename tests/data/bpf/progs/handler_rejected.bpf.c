// Overflow-handler fixture the verifier must reject: a map value used without a NULL check.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4);
  __type(key, __u32);
  __type(value, __u64);
} seen SEC(".maps");

SEC("perf_event")
int unchecked(struct bpf_perf_event_data* ctx) {
  __u32 key = 1;
  __u64* v = bpf_map_lookup_elem(&seen, &key);
  asm volatile("" : "+r"(v));  // keep clang from proving anything about v
  return *v == ctx->sample_period;
}

char LICENSE[] SEC("license") = "GPL";
