// expect: accept
// why: a map lookup's result (map_value_or_null) passed to a global function's u64 pointer: NULL or 8 readable bytes, accepted
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} counts SEC(".maps");

__attribute__((noinline)) int bump(__u64 *p) {
  if (!p)
    return 0;
  *p += 1;
  return 1;
}

SEC("perf_event")
int global_map_value(struct bpf_perf_event_data *ctx) {
  __u32 key = ctx->sample_period;
  return bump(bpf_map_lookup_elem(&counts, &key));
}

char LICENSE[] SEC("license") = "GPL";
