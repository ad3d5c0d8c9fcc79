// expect: accept
// why: get_stackid (perf_event variant) with a BTF-defined stack trace map
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_STACK_TRACE);
  __uint(max_entries, 128);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, 32 * sizeof(__u64));
} stacks SEC(".maps");

SEC("perf_event")
int get_stackid(struct bpf_perf_event_data *ctx) {
  return bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK) >= 0;
}

char LICENSE[] SEC("license") = "GPL";
