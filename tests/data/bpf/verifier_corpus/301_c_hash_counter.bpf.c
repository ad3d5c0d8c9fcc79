// expect: accept
// why: BTF-defined hash map: lookup, NULL check, atomic add, insert on miss
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, __u32);
  __type(value, __u64);
} counts SEC(".maps");

SEC("perf_event")
int hash_counter(struct bpf_perf_event_data *ctx) {
  __u32 cpu = bpf_get_smp_processor_id();
  __u64 *count = bpf_map_lookup_elem(&counts, &cpu);
  if (count) {
    __sync_fetch_and_add(count, 1);
  } else {
    __u64 one = 1;
    bpf_map_update_elem(&counts, &cpu, &one, BPF_NOEXIST);
  }
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
