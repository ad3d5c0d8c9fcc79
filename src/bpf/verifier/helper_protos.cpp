// The helpers of BPF_PROG_TYPE_PERF_EVENT (pe_prog_func_proto, then bpf_tracing_func_proto and
// bpf_base_func_proto for a privileged loader), with the kernel's argument types and GPL flags.
// Helpers the kernel offers that userperf cannot run are absent (queue/stack maps, ringbuf dynptrs,
// most BTF-typed helpers, ...): the verifier rejects them as the kernel
// rejects a helper its program type lacks. Every helper here has a function in the runtime's table
// (tests/unit/bpf/perf/helper_table_test.cpp).
#include "bpf/verifier/helper_protos.hpp"

#include <linux/bpf.h>

#include <array>

namespace userperf::bpf {
namespace {

using A = ArgType;
using R = RetType;

constexpr HelperProto proto(const char* name, R ret, std::array<A, 5> args, bool gpl) {
  return HelperProto{name, ret, {args[0], args[1], args[2], args[3], args[4]}, gpl};
}

constexpr A kNone = A::kNone;

struct Entry {
  std::int32_t id;
  HelperProto proto;
};

constexpr Entry kPerfEventHelpers[] = {
    {BPF_FUNC_map_lookup_elem,
     proto("map_lookup_elem", R::kPtrToMapValueOrNull,
           {A::kConstMapPtr, A::kPtrToMapKey, kNone, kNone, kNone}, false)},
    {BPF_FUNC_map_update_elem,
     proto("map_update_elem", R::kInteger,
           {A::kConstMapPtr, A::kPtrToMapKey, A::kPtrToMapValue, A::kAnything, kNone}, false)},
    // The interpreter runs it as the kernel's tail call (vm: InterpreterOptions::tail_call).
    {BPF_FUNC_tail_call, proto("tail_call", R::kVoid,
                               {A::kPtrToCtx, A::kConstMapPtr, A::kAnything, kNone, kNone}, false)},
    {BPF_FUNC_map_delete_elem,
     proto("map_delete_elem", R::kInteger, {A::kConstMapPtr, A::kPtrToMapKey, kNone, kNone, kNone},
           false)},
    // The compat probe_read helpers exist on x86-64 (non-overlapping address spaces).
    {BPF_FUNC_probe_read,
     proto("probe_read", R::kInteger,
           {A::kPtrToUninitMem, A::kConstSizeOrZero, A::kAnything, kNone, kNone}, true)},
    {BPF_FUNC_probe_read_str,
     proto("probe_read_str", R::kInteger,
           {A::kPtrToUninitMem, A::kConstSizeOrZero, A::kAnything, kNone, kNone}, true)},
    {BPF_FUNC_probe_read_user,
     proto("probe_read_user", R::kInteger,
           {A::kPtrToUninitMem, A::kConstSizeOrZero, A::kAnything, kNone, kNone}, true)},
    {BPF_FUNC_probe_read_user_str,
     proto("probe_read_user_str", R::kInteger,
           {A::kPtrToUninitMem, A::kConstSizeOrZero, A::kAnything, kNone, kNone}, true)},
    {BPF_FUNC_probe_read_kernel,
     proto("probe_read_kernel", R::kInteger,
           {A::kPtrToUninitMem, A::kConstSizeOrZero, A::kAnything, kNone, kNone}, true)},
    {BPF_FUNC_probe_read_kernel_str,
     proto("probe_read_kernel_str", R::kInteger,
           {A::kPtrToUninitMem, A::kConstSizeOrZero, A::kAnything, kNone, kNone}, true)},
    {BPF_FUNC_ktime_get_ns, proto("ktime_get_ns", R::kInteger, {}, false)},
    {BPF_FUNC_ktime_get_boot_ns, proto("ktime_get_boot_ns", R::kInteger, {}, false)},
    {BPF_FUNC_ktime_get_coarse_ns, proto("ktime_get_coarse_ns", R::kInteger, {}, false)},
    {BPF_FUNC_ktime_get_tai_ns, proto("ktime_get_tai_ns", R::kInteger, {}, false)},
    {BPF_FUNC_jiffies64, proto("jiffies64", R::kInteger, {}, false)},
    // Arguments 3..5 are the format's values: the kernel does not check them.
    {BPF_FUNC_trace_printk,
     proto("trace_printk", R::kInteger, {A::kPtrToMem, A::kConstSize, kNone, kNone, kNone}, true)},
    {BPF_FUNC_get_prandom_u32, proto("get_prandom_u32", R::kInteger, {}, false)},
    {BPF_FUNC_get_smp_processor_id, proto("get_smp_processor_id", R::kInteger, {}, false)},
    {BPF_FUNC_get_numa_node_id, proto("get_numa_node_id", R::kInteger, {}, false)},
    {BPF_FUNC_get_current_pid_tgid, proto("get_current_pid_tgid", R::kInteger, {}, false)},
    {BPF_FUNC_get_current_uid_gid, proto("get_current_uid_gid", R::kInteger, {}, false)},
    // The address of a synthetic task_struct (perf/current_task.hpp): a scalar to the verifier,
    // read through probe_read_kernel; GPL-only as in kernel/trace/bpf_trace.c.
    {BPF_FUNC_get_current_task, proto("get_current_task", R::kInteger, {}, true)},
    // The thread's cgroup v2 (perf/current_cgroup.hpp); current_task_under_cgroup takes a
    // CGROUP_ARRAY only (calls.cpp: check_map_compat).
    {BPF_FUNC_get_current_cgroup_id, proto("get_current_cgroup_id", R::kInteger, {}, false)},
    {BPF_FUNC_get_current_ancestor_cgroup_id,
     proto("get_current_ancestor_cgroup_id", R::kInteger,
           {A::kAnything, kNone, kNone, kNone, kNone}, false)},
    {BPF_FUNC_current_task_under_cgroup,
     proto("current_task_under_cgroup", R::kInteger,
           {A::kConstMapPtr, A::kAnything, kNone, kNone, kNone}, false)},
    // The same task as a BTF pointer (PTR_TO_BTF_ID, trusted): its loads are checked against the
    // kernel's task_struct (btf_access.cpp) and read the synthetic task (probe loads).
    {BPF_FUNC_get_current_task_btf, proto("get_current_task_btf", R::kPtrToBtfIdTask, {}, true)},
    {BPF_FUNC_get_current_comm,
     proto("get_current_comm", R::kInteger,
           {A::kPtrToUninitMem, A::kConstSize, kNone, kNone, kNone}, false)},
    {BPF_FUNC_perf_event_read, proto("perf_event_read", R::kInteger,
                                     {A::kConstMapPtr, A::kAnything, kNone, kNone, kNone}, true)},
    {BPF_FUNC_perf_event_read_value,
     proto("perf_event_read_value", R::kInteger,
           {A::kConstMapPtr, A::kAnything, A::kPtrToUninitMem, A::kConstSize, kNone}, true)},
    // pe_prog_func_proto's own: the tracepoint-style output and the sample-based stack helpers.
    {BPF_FUNC_perf_event_output,
     proto("perf_event_output", R::kInteger,
           {A::kPtrToCtx, A::kConstMapPtr, A::kAnything, A::kPtrToMem, A::kConstSizeOrZero}, true)},
    {BPF_FUNC_get_stackid,
     proto("get_stackid", R::kInteger, {A::kPtrToCtx, A::kConstMapPtr, A::kAnything, kNone, kNone},
           true)},
    {BPF_FUNC_get_stack,
     proto("get_stack", R::kInteger,
           {A::kPtrToCtx, A::kPtrToUninitMem, A::kConstSizeOrZero, A::kAnything, kNone}, true)},
    {BPF_FUNC_perf_prog_read_value,
     proto("perf_prog_read_value", R::kInteger,
           {A::kPtrToCtx, A::kPtrToUninitMem, A::kConstSize, kNone, kNone}, true)},
    // kernel/bpf/ringbuf.c (bpf_base_func_proto); the dynptr variants are not offered.
    {BPF_FUNC_ringbuf_output,
     proto("ringbuf_output", R::kInteger,
           {A::kConstMapPtr, A::kPtrToMem, A::kConstSizeOrZero, A::kAnything, kNone}, false)},
    {BPF_FUNC_ringbuf_reserve,
     proto("ringbuf_reserve", R::kPtrToRingbufMemOrNull,
           {A::kConstMapPtr, A::kConstAllocSizeOrZero, A::kAnything, kNone, kNone}, false)},
    {BPF_FUNC_ringbuf_submit,
     proto("ringbuf_submit", R::kVoid, {A::kReleaseRingbufMem, A::kAnything, kNone, kNone, kNone},
           false)},
    {BPF_FUNC_ringbuf_discard,
     proto("ringbuf_discard", R::kVoid, {A::kReleaseRingbufMem, A::kAnything, kNone, kNone, kNone},
           false)},
    {BPF_FUNC_ringbuf_query, proto("ringbuf_query", R::kInteger,
                                   {A::kConstMapPtr, A::kAnything, kNone, kNone, kNone}, false)},
    // The interpreter runs the callback itself (vm: OpKind::LOOP); the verifier walks the
    // callback as the kernel does (calls.cpp: push_callback).
    {BPF_FUNC_loop,
     proto("loop", R::kInteger,
           {A::kAnything, A::kPtrToFunc, A::kPtrToStackOrNull, A::kAnything, kNone}, false)},
    // The callback runs once with the mapping of the calling process that holds the address
    // (perf/find_vma.cpp); the verifier walks it as set_find_vma_callback_state sets it up.
    {BPF_FUNC_find_vma,
     proto("find_vma", R::kInteger,
           {A::kPtrToBtfIdTask, A::kAnything, A::kPtrToFunc, A::kPtrToStackOrNull, A::kAnything},
           false)},
    // userperf's samples carry no branch records: the helper answers as the kernel does for an
    // event without them (perf/perf_helpers.cpp).
    {BPF_FUNC_read_branch_records,
     proto("read_branch_records", R::kInteger,
           {A::kPtrToCtx, A::kPtrToUninitMemOrNull, A::kConstSizeOrZero, A::kAnything, kNone},
           true)},
    {BPF_FUNC_get_attach_cookie,
     proto("get_attach_cookie", R::kInteger, {A::kPtrToCtx, kNone, kNone, kNone, kNone}, false)},
};

constexpr int kTableSize = 256;

constexpr std::array<const HelperProto*, kTableSize> build_table() {
  std::array<const HelperProto*, kTableSize> table{};
  for (const Entry& e : kPerfEventHelpers) table[static_cast<std::size_t>(e.id)] = &e.proto;
  return table;
}

constexpr std::array<const HelperProto*, kTableSize> kTable = build_table();

}  // namespace

const HelperProto* perf_event_helper_proto(std::int32_t id) {
  if (id < 0 || id >= kTableSize) return nullptr;
  return kTable[static_cast<std::size_t>(id)];
}

}  // namespace userperf::bpf
