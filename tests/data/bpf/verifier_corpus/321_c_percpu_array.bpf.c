// expect: accept
// why: a per-CPU array counter, updated in place
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 2);
  __type(key, __u32);
  __type(value, __u64);
} hits SEC(".maps");

SEC("perf_event")
int percpu_array(struct bpf_perf_event_data *ctx) {
  __u32 key = ctx->addr != 0;
  __u64 *hit = bpf_map_lookup_elem(&hits, &key);
  if (hit) *hit += 1;
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
