// bpf_get_current_task_btf and bpf_find_vma as the kernel's selftest shape uses them: the task's
// ids and comm read through the BTF pointer (probe loads), then the mapping that holds an address
// the test gives, read in the callback through the vma's BTF pointer: vm_flags, vm_start/vm_end,
// vm_file->f_path.dentry's inline name and d_name.name. The declarations are partial CO-RE ones;
// the loader relocates them to the running kernel's offsets (6.14+: d_shortname, no d_iname).
// tests/unit/bpf/perf/find_vma_e2e_test.cpp compares with getpid, gettid, the thread's name and
// /proc/self/maps.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

#include <bpf/bpf_helpers.h>

union shortname_store {
  unsigned char string[40];
} __attribute__((preserve_access_index));

struct qstr {
  const unsigned char *name;
} __attribute__((preserve_access_index));

struct dentry {
  struct qstr d_name;
  union shortname_store d_shortname;
} __attribute__((preserve_access_index));

struct path {
  struct dentry *dentry;
} __attribute__((preserve_access_index));

struct file {
  struct path f_path;
} __attribute__((preserve_access_index));

struct vm_area_struct {
  unsigned long vm_start;
  unsigned long vm_end;
  unsigned long vm_flags;
  struct file *vm_file;
} __attribute__((preserve_access_index));

struct task_struct {
  int pid;
  int tgid;
  char comm[16];
} __attribute__((preserve_access_index));

// The addresses to look up, from the test.
struct lookup {
  __u64 code;  // in the test binary's text
  __u64 anon;  // in an anonymous mapping
};

struct seen {
  __u64 runs;
  __s32 pid;
  __s32 tgid;
  char comm[16];
  __s64 code_ret;   // bpf_find_vma(code): 0
  __s64 zero_ret;   // bpf_find_vma(0): -ENOENT
  __s64 flags_ret;  // flags 1: -EINVAL
  __s64 anon_ret;
  __s32 cb_pid;  // the callback's task->pid
  __s32 pad;
  __u64 vm_start;
  __u64 vm_end;
  __u64 vm_flags;
  __u64 file;
  char iname[40];
  char name[64];
  __u64 anon_flags;
  __u64 anon_file;    // 0: an anonymous mapping
  __u64 anon_dentry;  // vm_file->f_path.dentry through the NULL vm_file: 0
};

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct lookup);
} lookup SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct seen);
} seen SEC(".maps");

static long code_vma(struct task_struct *task, struct vm_area_struct *vma, void *data) {
  __u32 zero = 0;
  struct seen *s = bpf_map_lookup_elem(&seen, &zero);
  if (!s) return 0;
  s->cb_pid = task->pid;
  s->vm_start = vma->vm_start;
  s->vm_end = vma->vm_end;
  s->vm_flags = vma->vm_flags;
  struct file *file = vma->vm_file;
  s->file = (__u64)file;
  if (file) {
    bpf_probe_read_kernel_str(s->iname, sizeof s->iname, file->f_path.dentry->d_shortname.string);
    bpf_probe_read_kernel_str(s->name, sizeof s->name, file->f_path.dentry->d_name.name);
  }
  return 0;
}

static long anon_vma(struct task_struct *task, struct vm_area_struct *vma, void *data) {
  __u32 zero = 0;
  struct seen *s = bpf_map_lookup_elem(&seen, &zero);
  if (!s) return 0;
  s->anon_flags = vma->vm_flags;
  s->anon_file = (__u64)vma->vm_file;
  s->anon_dentry = (__u64)vma->vm_file->f_path.dentry;  // probe loads: NULL walks to 0
  return 0;
}

SEC("perf_event")
int find_vma_of_task(struct bpf_perf_event_data *ctx) {
  __u32 zero = 0;
  struct lookup *in = bpf_map_lookup_elem(&lookup, &zero);
  struct seen *s = bpf_map_lookup_elem(&seen, &zero);
  if (!in || !s) return 0;
  struct task_struct *task = bpf_get_current_task_btf();
  s->runs++;
  s->pid = task->pid;
  s->tgid = task->tgid;
  __builtin_memcpy(s->comm, task->comm, sizeof s->comm);
  s->code_ret = bpf_find_vma(task, in->code, code_vma, 0, 0);
  s->zero_ret = bpf_find_vma(task, 0, code_vma, 0, 0);
  s->flags_ret = bpf_find_vma(task, in->code, code_vma, 0, 1);
  s->anon_ret = bpf_find_vma(task, in->anon, anon_vma, 0, 0);
  return 0;
}

char LICENSE[] SEC("license") = "GPL";
