// Map-in-map at run time: `by_slot` (ARRAY_OF_MAPS, slot 0 initialised statically with
// counts_a) and `by_addr` (HASH_OF_MAPS keyed by the sample's addr, filled from user space).
// Each overflow adds 1 to element 0 of by_slot[0]'s map and to element 1 of by_addr[addr]'s map;
// the sample is kept only when by_addr has a map for its addr.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct counts_map {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 4);
  __type(key, __u32);
  __type(value, __u64);
};

struct counts_map counts_a SEC(".maps");
struct counts_map counts_b SEC(".maps");

// Not the template's shape (8 entries, not 4): no outer slot takes it.
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 8);
  __type(key, __u32);
  __type(value, __u64);
} wider SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
  __uint(max_entries, 2);
  __type(key, __u32);
  __array(values, struct counts_map);
} by_slot SEC(".maps") = {
    .values = {[0] = &counts_a},
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
  __uint(max_entries, 4);
  __type(key, __u64);
  __array(values, struct counts_map);
} by_addr SEC(".maps");

static void bump(void* counts, __u32 key) {
  __u64* value = bpf_map_lookup_elem(counts, &key);
  if (value) __sync_fetch_and_add(value, 1);
}

SEC("perf_event")
int count(struct bpf_perf_event_data* ctx) {
  __u32 slot = 0;
  void* counts = bpf_map_lookup_elem(&by_slot, &slot);
  if (counts) bump(counts, 0);
  __u64 addr = ctx->addr;
  counts = bpf_map_lookup_elem(&by_addr, &addr);
  if (!counts) return 0;
  bump(counts, 1);
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
