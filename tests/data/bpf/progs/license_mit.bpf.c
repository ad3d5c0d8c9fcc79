// A non-GPL licensed program: only helpers that are not GPL-only.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} hits SEC(".maps");

SEC("perf_event")
int license_mit(struct bpf_perf_event_data *ctx) {
  __u32 zero = 0;
  __u64 *count = bpf_map_lookup_elem(&hits, &zero);
  if (count) __sync_fetch_and_add(count, 1);
  return ctx->sample_period > 10;
}

char LICENSE[] SEC("license") = "MIT";
__u32 VERSION SEC("version") = 0x060100;
