// bcc cpufreq's cgroup filter (bpf_current_task_under_cgroup on slot 0 of a CGROUP_ARRAY) with
// the cgroup id helpers: each overflow records what they answered for the sampled thread.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, sizeof(__u32));
  __uint(max_entries, 1);
} cgroup_map SEC(".maps");

struct seen {
  __u64 runs;
  __u64 under;  // runs for which the thread was under slot 0's cgroup
  __s64 last_under;
  __s64 past_end;
  __u64 cgroup_id;
  __u64 ancestor1;
};

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct seen);
} seen SEC(".maps");

SEC("perf_event")
int filter(struct bpf_perf_event_data* ctx) {
  __u32 zero = 0;
  struct seen* s = bpf_map_lookup_elem(&seen, &zero);
  if (!s) return 0;
  long under = bpf_current_task_under_cgroup(&cgroup_map, 0);
  s->runs++;
  if (under == 1) s->under++;
  s->last_under = under;
  s->past_end = bpf_current_task_under_cgroup(&cgroup_map, 1);
  s->cgroup_id = bpf_get_current_cgroup_id();
  s->ancestor1 = bpf_get_current_ancestor_cgroup_id(1);
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
