// expect: reject EACCES
// why: the callback context is a map value: bpf_loop takes a stack pointer or NULL only
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} acc SEC(".maps");

static int add(__u32 index, void *data) {
  __u64 *v = data;
  *v += index;
  return 0;
}

SEC("perf_event")
int loop_map_ctx(struct bpf_perf_event_data *ctx) {
  __u32 key = 0;
  __u64 *v = bpf_map_lookup_elem(&acc, &key);
  if (!v) return 0;
  bpf_loop(4, add, v, 0);
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
