// expect: accept
// why: the task address as a hash map key (a scalar stored to the stack), its count updated
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, __u64);
  __type(value, __u64);
} per_task SEC(".maps");

SEC("perf_event")
int current_task_map_key(struct bpf_perf_event_data *ctx) {
  __u64 task = bpf_get_current_task();
  __u64 one = 1;
  __u64 *count = bpf_map_lookup_elem(&per_task, &task);
  if (count) {
    __sync_fetch_and_add(count, 1);
    return 1;
  }
  bpf_map_update_elem(&per_task, &task, &one, BPF_ANY);
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
