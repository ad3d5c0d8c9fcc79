// expect: reject EINVAL
// why: bpf_get_current_task_btf is GPL-only
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
int task_btf_mit(struct bpf_perf_event_data *ctx) {
  struct task_struct *task = bpf_get_current_task_btf();
  return task != 0;
}

char LICENSE[] SEC("license") = "MIT";
