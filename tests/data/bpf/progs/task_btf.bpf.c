// bpf_get_current_task_btf's loads alone (no bpf_find_vma): probe loads that both tiers run.
// tests/unit/bpf/perf/tier_test.cpp compares them with gettid, getpid and the thread's name on the
// JIT and on the interpreter.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

#include <bpf/bpf_helpers.h>

struct task_struct {
  int pid;
  int tgid;
  unsigned int flags;  // not modelled: a probe load of it gives 0
  char comm[16];
  struct task_struct *group_leader;
} __attribute__((preserve_access_index));

struct seen {
  __s64 pid;  // sign-extended (a 32-bit signed load)
  __s32 tgid;
  __u32 flags;
  __s32 leader_pid;
  __s32 pad;
  char comm[16];
};

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct seen);
} seen SEC(".maps");

SEC("perf_event")
int task_btf_ids(struct bpf_perf_event_data *ctx) {
  __u32 zero = 0;
  struct seen *s = bpf_map_lookup_elem(&seen, &zero);
  if (!s) return 1;
  struct task_struct *task = bpf_get_current_task_btf();
  s->pid = task->pid;
  s->tgid = task->tgid;
  s->flags = task->flags;
  s->leader_pid = task->group_leader->pid;
  __builtin_memcpy(s->comm, task->comm, sizeof s->comm);
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
