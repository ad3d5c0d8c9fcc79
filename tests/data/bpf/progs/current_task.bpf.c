// bpf_get_current_task read as profilers read it (bcc libbpf-tools, parca-agent, lightswitch):
// BPF_CORE_READ of the task's ids, comm, parent, group leader, fs base and kernel stack, whose
// top holds the interrupted user registers (task_pt_regs). The declarations are partial, as a
// vmlinux.h of another kernel would be: the CO-RE relocations put the running kernel's offsets in,
// and the synthetic task keeps each member there (tests/unit/bpf/perf/current_task_e2e_test.cpp).
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

struct thread_struct {
  unsigned long fsbase;
} __attribute__((preserve_access_index));

struct mm_struct {
  unsigned long arg_end;
  unsigned long start_stack;
  unsigned long arg_start;
} __attribute__((preserve_access_index));

struct task_struct {
  struct mm_struct *mm;
  void *stack;
  struct task_struct *group_leader;
  int tgid;
  char comm[16];
  struct task_struct *real_parent;
  struct thread_struct thread;
  int pid;
} __attribute__((preserve_access_index));

#define THREAD_SIZE 16384  // x86-64 without KASAN

// What the test compares with getpid, gettid, getppid, PR_GET_NAME and ARCH_GET_FS.
struct seen {
  __u64 runs;
  __u64 task;
  __s32 pid;
  __s32 tgid;
  __s32 parent_tgid;
  __s32 leader_pid;
  __s32 leader_tgid;
  __s32 comm_len;
  char comm[16];
  __u64 fsbase;
  __u64 stack_ip;  // pt_regs at the top of the kernel stack
  __u64 stack_sp;
  __u64 ctx_ip;  // the same registers through the context
  __u64 ctx_sp;
  __s64 unmodelled_err;  // probe_read_kernel of a member the synthetic task does not model
  __u64 unmodelled_dst;
  __s64 user_err;  // probe_read_kernel of a user address
  __u64 compat_user;  // the legacy probe_read of the map value (user memory in userperf)
  __s64 compat_err;
  __u64 mm_start_stack;  // /proc/self/stat's startstack, arg_start, arg_end
  __u64 mm_arg_start;
  __u64 mm_arg_end;
};

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct seen);
} seen SEC(".maps");

SEC("perf_event")
int read_current_task(struct bpf_perf_event_data *ctx) {
  __u32 zero = 0;
  struct seen *s = bpf_map_lookup_elem(&seen, &zero);
  if (!s) return 0;
  struct task_struct *task = (struct task_struct *)bpf_get_current_task();
  s->task = (__u64)task;
  s->pid = BPF_CORE_READ(task, pid);
  s->tgid = BPF_CORE_READ(task, tgid);
  s->parent_tgid = BPF_CORE_READ(task, real_parent, tgid);
  s->leader_pid = BPF_CORE_READ(task, group_leader, pid);
  s->leader_tgid = BPF_CORE_READ(task, group_leader, tgid);
  s->comm_len = BPF_CORE_READ_STR_INTO(&s->comm, task, comm);
  s->fsbase = BPF_CORE_READ(task, thread.fsbase);
  void *stack = BPF_CORE_READ(task, stack);
  struct pt_regs regs;
  bpf_probe_read_kernel(&regs, sizeof(regs), stack + THREAD_SIZE - sizeof(regs));
  s->stack_ip = regs.rip;
  s->stack_sp = regs.rsp;
  s->ctx_ip = ctx->regs.rip;
  s->ctx_sp = ctx->regs.rsp;
  s->unmodelled_err = bpf_probe_read_kernel(&s->unmodelled_dst, 8, (char *)task + 8);
  __u64 word;
  // A user-half address (the map value is no such thing in the kernel, where it is kernel memory).
  s->user_err = bpf_probe_read_kernel(&word, sizeof(word), (const void *)0x400000);
  s->compat_err = bpf_probe_read(&s->compat_user, sizeof(s->compat_user), &s->task);
  s->mm_start_stack = BPF_CORE_READ(task, mm, start_stack);
  s->mm_arg_start = BPF_CORE_READ(task, mm, arg_start);
  s->mm_arg_end = BPF_CORE_READ(task, mm, arg_end);
  s->runs++;
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
