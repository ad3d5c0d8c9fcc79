// expect: reject EACCES
// why: an array inside a map value indexed by a ctx value masked to 0..7 of 4 slots
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct slots {
  __u64 slot[4];
};

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct slots);
} table SEC(".maps");

SEC("perf_event")
int value_index_unchecked(struct bpf_perf_event_data *ctx) {
  __u32 key = 0;
  struct slots *slots = bpf_map_lookup_elem(&table, &key);
  if (!slots) return 0;
  slots->slot[ctx->sample_period & 7] += 1;
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
