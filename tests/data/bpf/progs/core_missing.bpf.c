// A CO-RE read of a field the running kernel lacks, unguarded: the loader poisons the instruction
// as libbpf does, and the verifier rejects the program that reaches it ("invalid func
// unknown#195896080"), as Linux rejects what libbpf loads (tests/integration/bpf_verify_test.sh).
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

// The field's name before Linux 5.14 (now __state).
struct task_struct___old {
  long state;
} __attribute__((preserve_access_index));

SEC("perf_event")
int unguarded_missing_field(struct bpf_perf_event_data* ctx) {
  struct task_struct___old* task = (struct task_struct___old*)ctx->addr;
  return BPF_CORE_READ(task, state);
}

char LICENSE[] SEC("license") = "GPL";
