// expect: accept
// why: task->pid through bpf_get_current_task_btf: a trusted task_struct pointer, a scalar load
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct mm_struct {
  unsigned long start_stack;
} __attribute__((preserve_access_index));

struct file;

struct vm_area_struct {
  unsigned long vm_start;
  unsigned long vm_flags;
  struct file *vm_file;
} __attribute__((preserve_access_index));

struct task_struct {
  int pid;
  int tgid;
  struct mm_struct *mm;
  struct task_struct *group_leader;
} __attribute__((preserve_access_index));

SEC("perf_event")
int task_btf_pid(struct bpf_perf_event_data *ctx) {
  struct task_struct *task = bpf_get_current_task_btf();
  return task->pid + task->group_leader->tgid;
}

char LICENSE[] SEC("license") = "GPL";
