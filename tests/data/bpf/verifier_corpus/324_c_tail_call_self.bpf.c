// expect: accept
// why: a perf_event program tail-calling itself through a PROG_ARRAY, as profilers' unwinders do
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_PROG_ARRAY);
  __uint(max_entries, 2);
  __type(key, __u32);
  __type(value, __u32);
} jmp SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} depth SEC(".maps");

SEC("perf_event")
int unwind(struct bpf_perf_event_data *ctx) {
  __u32 key = 0;
  __u64 *d = bpf_map_lookup_elem(&depth, &key);
  if (!d) return 0;
  if (++*d < 16) bpf_tail_call(ctx, &jmp, 0);
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
