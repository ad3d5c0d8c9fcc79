// CO-RE as programs written against vmlinux.h use it: BPF_CORE_READ of a field of a kernel type
// (here declared locally with preserve_access_index, as vmlinux.h declares every type), and
// bpf_core_field_exists and bpf_core_type_id_kernel. tests/unit/bpf/loader/core_relocation_test.cpp
// turns the last one into a kind userperf does not apply (type_matches) to see the loader refuse
// the object rather than run clang's placeholder, and corrupts copies of its records.
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

SEC("perf_event")
int kernel_type_id(struct bpf_perf_event_data* ctx) {
  return bpf_core_type_id_kernel(struct task_struct);
}

char LICENSE[] SEC("license") = "GPL";
