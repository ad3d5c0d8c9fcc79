// expect: reject EACCES
// why: a lookup result dereferenced without a NULL check
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16);
  __type(key, __u32);
  __type(value, __u64);
} counts SEC(".maps");

SEC("perf_event")
int no_null_check(struct bpf_perf_event_data *ctx) {
  __u32 key = 0;
  __u64 *count = bpf_map_lookup_elem(&counts, &key);
  return *count != 0;
}

char LICENSE[] SEC("license") = "GPL";
