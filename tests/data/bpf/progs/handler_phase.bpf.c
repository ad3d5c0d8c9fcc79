// Overflow-handler fixture for real timer samples: keeps a sample only while the word at the
// address in config[0] (the sampled program's "phase" flag) is non-zero, read with
// bpf_probe_read_user; counts kept and dropped samples in results[0] and results[1].
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 2);
  __type(key, __u32);
  __type(value, __u64);
} config SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 2);
  __type(key, __u32);
  __type(value, __u64);
} results SEC(".maps");

SEC("perf_event")
int keep_in_phase(struct bpf_perf_event_data* ctx) {
  __u32 zero = 0;
  __u64* where = bpf_map_lookup_elem(&config, &zero);
  if (!where) return 1;
  __u64 phase = 0;
  bpf_probe_read_user(&phase, sizeof phase, (const void*)*where);
  __u32 slot = phase ? 0 : 1;
  __u64* n = bpf_map_lookup_elem(&results, &slot);
  if (n) __sync_fetch_and_add(n, 1);
  return phase != 0;
}

char LICENSE[] SEC("license") = "GPL";
