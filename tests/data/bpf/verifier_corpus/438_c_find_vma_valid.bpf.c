// expect: accept
// why: bpf_find_vma with a callback reading the vma (vm_flags, vm_file) and returning 0
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

static long check_vma(struct task_struct *task, struct vm_area_struct *vma, __u64 *data) {
  *data = (vma->vm_flags & 4) + task->pid;
  if (vma->vm_file) *data += 1;
  return 0;
}

SEC("perf_event")
int find_vma_valid(struct bpf_perf_event_data *ctx) {
  struct task_struct *task = bpf_get_current_task_btf();
  __u64 data = 0;
  bpf_find_vma(task, ctx->regs.rip, check_vma, &data, 0);
  return data != 0;
}

char LICENSE[] SEC("license") = "GPL";
