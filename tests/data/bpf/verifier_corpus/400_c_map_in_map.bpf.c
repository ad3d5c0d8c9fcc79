// expect: accept
// why: lookups in a HASH_OF_MAPS and an ARRAY_OF_MAPS (inner maps from __array(values, ...), one slot initialised statically) give, NULL-checked, inner maps whose values are read and updated with the templates' sizes
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct unwind_table {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 16);
  __type(key, __u32);
  __type(value, __u64);
} table0 SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
  __uint(max_entries, 8);
  __type(key, __u64);
  __array(values, struct unwind_table);
} tables SEC(".maps");

struct counter_map {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, __u32);
  __type(value, __u64);
};

struct counter_map counters0 SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
  __uint(max_entries, 4);
  __type(key, __u32);
  __array(values, struct counter_map);
} counter_sets SEC(".maps") = {
    .values = {[0] = &counters0},
};

SEC("perf_event")
int map_in_map(struct bpf_perf_event_data *ctx) {
  __u64 id = ctx->addr;
  __u64 result = 0;
  void *table = bpf_map_lookup_elem(&tables, &id);
  if (table) {
    __u32 row = ctx->sample_period & 15;
    __u64 *value = bpf_map_lookup_elem(table, &row);
    if (value) result = *value;
  }
  __u32 set = 0;
  void *counters = bpf_map_lookup_elem(&counter_sets, &set);
  if (counters) {
    __u32 key = 7;
    __u64 one = 1;
    __u64 *count = bpf_map_lookup_elem(counters, &key);
    if (count)
      __sync_fetch_and_add(count, 1);
    else
      bpf_map_update_elem(counters, &key, &one, BPF_NOEXIST);
    bpf_map_delete_elem(counters, &result);
  }
  return result != 0;
}

char LICENSE[] SEC("license") = "GPL";
