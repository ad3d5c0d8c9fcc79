// expect: accept
// why: bpf_find_vma's flags an unknown scalar (ARG_ANYTHING: checked at run time)
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

static long check_vma(struct task_struct *task, struct vm_area_struct *vma, void *data) {
  return 1;
}

SEC("perf_event")
int find_vma_flags_unknown(struct bpf_perf_event_data *ctx) {
  struct task_struct *task = bpf_get_current_task_btf();
  return bpf_find_vma(task, ctx->regs.rip, check_vma, 0, ctx->sample_period) == 0;
}

char LICENSE[] SEC("license") = "GPL";
