// CO-RE as programs written against vmlinux.h use it: BPF_CORE_READ of a field of a kernel type
// (here declared locally with preserve_access_index, as vmlinux.h declares every type), and
// bpf_core_field_exists. clang records each in .BTF.ext's CO-RE relocations; libbpf rewrites the
// instructions at load with the kernel's offsets. userperf does not apply them yet, so its loader
// refuses this object (tests/unit/bpf/loader/core_relocation_test.cpp).
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

struct task_struct {
  int pid;
  int tgid;
} __attribute__((preserve_access_index));

SEC("perf_event")
int read_pid(struct bpf_perf_event_data* ctx) {
  struct task_struct* task = (struct task_struct*)ctx->addr;
  return BPF_CORE_READ(task, pid);
}

SEC("perf_event")
int has_tgid(struct bpf_perf_event_data* ctx) {
  struct task_struct* task = (struct task_struct*)ctx->addr;
  return bpf_core_field_exists(task->tgid);
}

char LICENSE[] SEC("license") = "GPL";
