// CO-RE relocations of the kinds userperf applies, against the running kernel's types: each value
// is one instruction clang leaves a placeholder in (the value in the declarations below) and the
// loader rewrites with the kernel's (tests/unit/bpf/loader/core_relocation_test.cpp compares
// every instruction with what libbpf loads into the kernel). The declarations are deliberately
// partial and out of order, as vmlinux.h of another kernel would be.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

struct task_struct {
  int tgid;
  int pid;
  unsigned int __state;
  int prio;
  unsigned int sched_reset_on_fork : 1;
  unsigned int sched_contributes_to_load : 1;
} __attribute__((preserve_access_index));

// A flavor: matched with the kernel's task_struct by name, without the ___ suffix.
struct task_struct___missing {
  int no_such_field;
} __attribute__((preserve_access_index));

// The field's name before Linux 5.14 (now __state): absent from the running kernel.
struct task_struct___old {
  long state;
} __attribute__((preserve_access_index));

// A flexible array member (size 0), read at a run-time index: pyroscope's and lightswitch's
// pid-namespace walk, `BPF_CORE_READ(task, thread_pid, numbers[level].nr)`.
struct upid {
  int nr;
} __attribute__((preserve_access_index));

struct pid {
  unsigned int level;
  struct upid numbers[];
} __attribute__((preserve_access_index));

struct type_not_in_any_kernel {
  int x;
} __attribute__((preserve_access_index));

enum bpf_map_type___local {
  BPF_MAP_TYPE_HASH___local = 42,
  NO_SUCH_ENUMERATOR___local = 43,
};

SEC("perf_event")
int pid_offset(struct bpf_perf_event_data* ctx) {
  struct task_struct* task = (struct task_struct*)ctx->addr;
  return BPF_CORE_READ(task, pid);
}

SEC("perf_event")
int field_facts(struct bpf_perf_event_data* ctx) {
  struct task_struct* task = (struct task_struct*)ctx->addr;
  struct task_struct___missing* other = (struct task_struct___missing*)ctx->addr;
  int r = bpf_core_field_size(task->tgid);
  r = r * 2 + bpf_core_field_exists(task->tgid);
  r = r * 2 + bpf_core_field_exists(other->no_such_field);
  return r;
}

SEC("perf_event")
int type_facts(struct bpf_perf_event_data* ctx) {
  int r = bpf_core_type_size(struct task_struct);
  r = r * 2 + bpf_core_type_exists(struct task_struct___missing);
  r = r * 2 + bpf_core_type_exists(struct type_not_in_any_kernel);
  return r;
}

SEC("perf_event")
int enum_facts(struct bpf_perf_event_data* ctx) {
  int r = bpf_core_enum_value(enum bpf_map_type___local, BPF_MAP_TYPE_HASH___local);
  r = r * 2 + bpf_core_enum_value_exists(enum bpf_map_type___local, BPF_MAP_TYPE_HASH___local);
  r = r * 2 + bpf_core_enum_value_exists(enum bpf_map_type___local, NO_SUCH_ENUMERATOR___local);
  return r;
}

// A bitfield read through a probe: byte offset and size of its load unit, the shifts, the sign.
SEC("perf_event")
int bitfield_read(struct bpf_perf_event_data* ctx) {
  struct task_struct* task = (struct task_struct*)ctx->addr;
  return BPF_CORE_READ_BITFIELD_PROBED(task, sched_contributes_to_load);
}

SEC("perf_event")
int signedness(struct bpf_perf_event_data* ctx) {
  struct task_struct* task = (struct task_struct*)ctx->addr;
  return __builtin_preserve_field_info(task->prio, BPF_FIELD_SIGNED) * 2 +
         __builtin_preserve_field_info(task->__state, BPF_FIELD_SIGNED);
}

// The kernel's BTF id of task_struct (for BTF-aware helpers) and the object's own.
SEC("perf_event")
int type_ids(struct bpf_perf_event_data* ctx) {
  return bpf_core_type_id_kernel(struct task_struct) * 2 +
         bpf_core_type_id_local(struct task_struct);
}

// The usual guard: the read of a field this kernel lacks is poisoned (as libbpf does) but never
// reached, so the program loads.
SEC("perf_event")
int guarded_missing_field(struct bpf_perf_event_data* ctx) {
  struct task_struct___old* task = (struct task_struct___old*)ctx->addr;
  if (bpf_core_field_exists(task->state)) return BPF_CORE_READ(task, state);
  return 0;
}

SEC("perf_event")
int flexible_array(struct bpf_perf_event_data* ctx) {
  struct pid* pid = (struct pid*)ctx->addr;
  unsigned int level = BPF_CORE_READ(pid, level);
  return BPF_CORE_READ(pid, numbers[level].nr);
}

char LICENSE[] SEC("license") = "GPL";
