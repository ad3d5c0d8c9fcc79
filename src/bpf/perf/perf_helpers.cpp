// SIGNAL-SAFE: see perf_helpers.hpp.
#include "bpf/perf/perf_helpers.hpp"

#include <linux/bpf.h>
#include <linux/perf_event.h>

#include <cerrno>
#include <cstring>

#include "bpf/isa/int_types.hpp"
#include "bpf/maps/map.hpp"
#include "bpf/maps/stack_trace_map.hpp"
#include "bpf/perf/current_cgroup.hpp"
#include "bpf/perf/current_task.hpp"
#include "bpf/perf/perf_event_ctx.hpp"
#include "bpf/runtime/base_helpers.hpp"
#include "core/read_values.hpp"
#include "core/sample_output.hpp"
#include "support/task_ids.hpp"

namespace userperf::bpf {

namespace {

const PerfEventRunCtx& run_ctx(const CallContext& call) {
  return *static_cast<const PerfEventRunCtx*>(call.env);
}

// Nested outputs on one thread (a signal interrupting an output), as the kernel's per-CPU nest
// level: task, softirq, irq, NMI.
thread_local int t_output_nest = 0;
constexpr int kMaxOutputNest = 3;

bool is_bpf_output(const core::Event& event) {
  return event.attr.type == PERF_TYPE_SOFTWARE && event.attr.config == PERF_COUNT_SW_BPF_OUTPUT;
}

// __bpf_perf_event_output's checks, in the kernel's order, then a RAW sample whose one fragment is
// the program's own memory: no intermediate copy.
u64 perf_event_output(u64, u64 map, u64 flags, u64 data, u64 size, CallContext& call) {
  struct Nest {
    Nest() { ++t_output_nest; }
    ~Nest() { --t_output_nest; }
  } nest;
  if (t_output_nest > kMaxOutputNest) return helper_error(EBUSY);
  if (flags & ~BPF_F_INDEX_MASK) return helper_error(EINVAL);
  const PerfEventRunCtx& ctx = run_ctx(call);
  const std::uint32_t cpu = current_cpu();
  std::uint64_t index = flags & BPF_F_INDEX_MASK;
  if (index == BPF_F_CURRENT_CPU) index = cpu;
  auto* array = static_cast<Map*>(helper_ptr(map));
  if (index >= array->spec().max_entries) return helper_error(E2BIG);
  auto* target = static_cast<core::Event*>(array->object_at(static_cast<std::uint32_t>(index)));
  if (target == nullptr) return helper_error(ENOENT);
  if (!is_bpf_output(*target)) return helper_error(EINVAL);
  // "Active on this CPU": enabled, and bound to this CPU or any, and to this thread or any.
  const bool on_this_cpu = target->cpu < 0 || static_cast<std::uint32_t>(target->cpu) == cpu;
  const bool this_task =
      target->pid < 0 || static_cast<std::uint32_t>(target->pid) == ctx.sample->tid;
  if (target->state.load(std::memory_order_acquire) != core::EventState::kActive || !on_this_cpu ||
      !this_task) {
    return helper_error(EOPNOTSUPP);
  }
  if (!call.may_access(data, size, false)) return helper_error(EFAULT);

  core::RawRecord raw;
  raw.frag.data = helper_ptr(data);
  raw.frag.size = static_cast<std::uint32_t>(size);
  const core::SampleExtras& from = ctx.sample->extra();
  core::SampleExtras extras;
  extras.regs_user = from.regs_user;
  extras.regs_intr = from.regs_intr;
  extras.callchain = from.callchain;
  extras.callchain_nr = from.callchain_nr;
  core::SampleData sample;  // perf_sample_data_init(sd, 0, 0): no addr, period 0
  sample.extras = &extras;
  sample.ip = ctx.sample->ip;
  sample.pid = ctx.sample->pid;
  sample.tid = ctx.sample->tid;
  sample.cpu = cpu;
  sample.cpumode = ctx.sample->cpumode;
  sample.raw = &raw;
  sample.time = target->clock_now();
  return static_cast<u64>(static_cast<std::int64_t>(core::output_sample(*target, sample)));
}

// get_map_perf_counter then perf_event_read_local: the event in a PERF_EVENT_ARRAY slot, readable
// only from its own thread (per-task) or CPU (per-CPU) and never when inherited.
int read_array_event(const CallContext& call, u64 map, u64 flags, std::uint64_t values[3]) {
  if (flags & ~BPF_F_INDEX_MASK) return -EINVAL;
  const std::uint32_t cpu = current_cpu();
  std::uint64_t index = flags & BPF_F_INDEX_MASK;
  if (index == BPF_F_CURRENT_CPU) index = cpu;
  auto* array = static_cast<Map*>(helper_ptr(map));
  if (index >= array->spec().max_entries) return -E2BIG;
  auto* event = static_cast<core::Event*>(array->object_at(static_cast<std::uint32_t>(index)));
  if (event == nullptr) return -ENOENT;
  if (event->attr.inherit) return -EOPNOTSUPP;
  if (event->pid >= 0 ? static_cast<std::uint32_t>(event->pid) != run_ctx(call).sample->tid
                      : event->cpu != static_cast<int>(cpu)) {
    return -EINVAL;
  }
  values[0] = event->count.load(std::memory_order_relaxed);
  event->read_times(event->clock_now(), values[1], values[2]);
  return 0;
}

u64 perf_event_read(u64 map, u64 flags, u64, u64, u64, CallContext& call) {
  std::uint64_t values[3];
  const int err = read_array_event(call, map, flags, values);
  return err != 0 ? static_cast<u64>(static_cast<std::int64_t>(err)) : values[0];
}

u64 perf_event_read_value(u64 map, u64 flags, u64 buf, u64 size, u64, CallContext& call) {
  if (!call.may_access(buf, size, true)) return helper_error(EFAULT);
  std::uint64_t values[3];
  const int err = size != sizeof values ? -EINVAL : read_array_event(call, map, flags, values);
  if (err != 0) {
    std::memset(helper_ptr(buf), 0, size);
    return static_cast<u64>(static_cast<std::int64_t>(err));
  }
  std::memcpy(helper_ptr(buf), values, sizeof values);
  return 0;
}

// Programs attached with PERF_EVENT_IOC_SET_BPF have no link, hence no cookie.
u64 get_attach_cookie(u64, u64, u64, u64, u64, CallContext&) {
  return 0;
}

// bpf_read_branch_records: no userperf PMU records branches, so a sample has none (software
// events refuse PERF_SAMPLE_BRANCH_STACK; an event that asks for it gets an empty stack, nr 0).
// The kernel's order of checks: flags, then whether the sample has a branch stack at all.
u64 read_branch_records(u64, u64 buf, u64 size, u64 flags, u64, CallContext& call) {
  if (flags & ~std::uint64_t{BPF_F_GET_BRANCH_RECORDS_SIZE}) return helper_error(EINVAL);
  if (!(run_ctx(call).event->attr.sample_type & PERF_SAMPLE_BRANCH_STACK)) {
    return helper_error(ENOENT);
  }
  if (flags & BPF_F_GET_BRANCH_RECORDS_SIZE) return 0;  // nr * sizeof(perf_branch_entry)
  if (buf == 0 || size % sizeof(perf_branch_entry) != 0) return helper_error(EINVAL);
  return 0;  // min(nr * entry size, size) bytes copied
}

// bpf_perf_prog_read_value: count, enabled and running of the event that overflowed.
u64 perf_prog_read_value(u64, u64 buf, u64 size, u64, u64, CallContext& call) {
  if (!call.may_access(buf, size, true)) return helper_error(EFAULT);
  // Any alignment: the verifier asks only for writable memory (a stack buffer at r10 - 235 is
  // fine), so the values are copied in, never stored as u64s.
  void* out = helper_ptr(buf);
  const core::Event& event = *run_ctx(call).event;
  int err = 0;
  if (size != sizeof(bpf_perf_event_value)) {
    err = EINVAL;
  } else if (event.attr.inherit) {
    err = EOPNOTSUPP;
  }
  if (err != 0) {
    std::memset(out, 0, size);
    return helper_error(err);
  }
  std::uint64_t enabled = 0;
  std::uint64_t running = 0;
  event.read_times(event.clock_now(), enabled, running);
  const std::uint64_t values[3] = {event.count.load(std::memory_order_relaxed), enabled, running};
  std::memcpy(out, values, sizeof values);
  return 0;
}

// The part of the sample's callchain the flags select (the kernel keeps kernel and user entries
// after PERF_CONTEXT_KERNEL / PERF_CONTEXT_USER markers), with the low 8 flag bits skipped.
// userperf samples user code only: without BPF_F_USER_STACK the chain is empty.
struct Trace {
  const std::uint64_t* ips = nullptr;
  std::uint32_t nr = 0;
};

Trace select_trace(const core::SampleData& sample, u64 flags) {
  const bool user = (flags & BPF_F_USER_STACK) != 0;
  const std::uint64_t want = user ? PERF_CONTEXT_USER : PERF_CONTEXT_KERNEL;
  Trace trace;
  bool in_part = false;
  const core::SampleExtras& extra = sample.extra();
  for (std::uint64_t i = 0; i < extra.callchain_nr; ++i) {
    const std::uint64_t entry = extra.callchain[i];
    if (entry >= static_cast<std::uint64_t>(PERF_CONTEXT_MAX)) {
      if (in_part) break;
      in_part = entry == want;
      continue;
    }
    if (!in_part) continue;
    if (trace.ips == nullptr) trace.ips = &extra.callchain[i];
    ++trace.nr;
  }
  const std::uint32_t skip = flags & BPF_F_SKIP_FIELD_MASK;
  if (skip >= trace.nr) return Trace{};
  trace.ips += skip;
  trace.nr -= skip;
  return trace;
}

u64 get_stackid(u64, u64 map, u64 flags, u64, u64, CallContext& call) {
  if (flags &
      ~(BPF_F_SKIP_FIELD_MASK | BPF_F_USER_STACK | BPF_F_FAST_STACK_CMP | BPF_F_REUSE_STACKID)) {
    return helper_error(EINVAL);
  }
  auto* stacks = static_cast<Map*>(helper_ptr(map));
  if (stacks->spec().type != BPF_MAP_TYPE_STACK_TRACE) return helper_error(EINVAL);
  const Trace trace = select_trace(*run_ctx(call).sample, flags);
  if (trace.nr == 0) return helper_error(EFAULT);
  return static_cast<u64>(
      static_cast<StackTraceMap*>(stacks)->get_stackid(trace.ips, trace.nr, flags));
}

// bpf_get_stack: the selected entries as u64s; the rest of buf is zeroed; on error all of it.
u64 get_stack(u64, u64 buf, u64 size, u64 flags, u64, CallContext& call) {
  if (!call.may_access(buf, size, true)) return helper_error(EFAULT);
  auto* out = static_cast<std::uint8_t*>(helper_ptr(buf));
  int err = 0;
  if (flags & ~(BPF_F_SKIP_FIELD_MASK | BPF_F_USER_STACK | BPF_F_USER_BUILD_ID)) {
    err = EINVAL;
  } else if ((flags & BPF_F_USER_BUILD_ID) && !(flags & BPF_F_USER_STACK)) {
    err = EINVAL;
  } else if (flags & BPF_F_USER_BUILD_ID) {
    err = EOPNOTSUPP;  // build-id records are not produced yet (see docs/bpf.md)
  } else if (size % sizeof(std::uint64_t) != 0) {
    err = EINVAL;
  }
  const Trace trace = err == 0 ? select_trace(*run_ctx(call).sample, flags) : Trace{};
  if (err == 0 && trace.nr == 0) err = EFAULT;
  if (err != 0) {
    std::memset(out, 0, size);
    return helper_error(err);
  }
  const std::size_t copy = std::min<std::size_t>(trace.nr * sizeof(std::uint64_t), size);
  std::memcpy(out, trace.ips, copy);
  std::memset(out + copy, 0, size - copy);
  return copy;
}

// ---- the current task (current_task.hpp): a synthetic task_struct in a kernel half of its own.

TaskReadContext task_read_context(const CallContext& call) {
  const PerfEventRunCtx& ctx = run_ctx(call);
  return TaskReadContext{ctx.task_layout, ctx.regs, ctx.vma};
}

u64 get_current_task(u64, u64, u64, u64, u64, CallContext&) {
  return synthetic_task_address(static_cast<std::uint32_t>(support::current_tid()));
}

// bpf_find_vma is the interpreter's callback op (find_vma.hpp); reached as a plain helper, the
// run stops.
u64 find_vma_unresolved(u64, u64, u64, u64, u64, CallContext& call) {
  call.abort = true;
  return helper_error(EINVAL);
}

// bpf_probe_read_kernel_common: dst zeroed when the read fails.
u64 probe_read_kernel(u64 dst, u64 size, u64 src, u64, u64, CallContext& call) {
  if (!call.may_access(dst, size, true)) return helper_error(EFAULT);
  const int err = read_synthetic_kernel(task_read_context(call), src, helper_ptr(dst), size);
  if (err < 0) std::memset(helper_ptr(dst), 0, size);
  return static_cast<u64>(static_cast<std::int64_t>(err));
}

u64 probe_read_kernel_str(u64 dst, u64 size, u64 src, u64, u64, CallContext& call) {
  if (!call.may_access(dst, size, true)) return helper_error(EFAULT);
  const long n = read_synthetic_kernel_string(task_read_context(call), src,
                                              static_cast<char*>(helper_ptr(dst)), size);
  if (n < 0) std::memset(helper_ptr(dst), 0, size);
  return static_cast<u64>(static_cast<std::int64_t>(n));
}

// x86-64's legacy probe_read (non-overlapping address spaces): below TASK_SIZE user memory,
// above it kernel memory.
constexpr u64 kTaskSize = 0x00007ffffffff000ull;

u64 probe_read_compat(u64 dst, u64 size, u64 src, u64 r4, u64 r5, CallContext& call) {
  return src < kTaskSize ? probe_read_user(dst, size, src, r4, r5, call)
                         : probe_read_kernel(dst, size, src, r4, r5, call);
}

u64 probe_read_compat_str(u64 dst, u64 size, u64 src, u64 r4, u64 r5, CallContext& call) {
  return src < kTaskSize ? probe_read_user_str(dst, size, src, r4, r5, call)
                         : probe_read_kernel_str(dst, size, src, r4, r5, call);
}

// ---- the current thread's cgroup v2 (current_cgroup.hpp).

u64 get_current_cgroup_id(u64, u64, u64, u64, u64, CallContext&) {
  return current_cgroup_id();
}

u64 get_current_ancestor_cgroup_id(u64 level, u64, u64, u64, u64, CallContext&) {
  return current_ancestor_cgroup_id(static_cast<std::int32_t>(level));  // the kernel's int
}

// bpf_current_task_under_cgroup: the verifier passed a CGROUP_ARRAY (check_map_func_compatibility).
u64 current_task_under_cgroup(u64 map, u64 index, u64, u64, u64, CallContext&) {
  auto* array = static_cast<Map*>(helper_ptr(map));
  const auto slot = static_cast<std::uint32_t>(index);  // the kernel's u32 idx
  if (slot >= array->spec().max_entries) return helper_error(E2BIG);
  const auto* cgroup = static_cast<const CgroupRef*>(array->object_at(slot));
  if (cgroup == nullptr) return helper_error(EAGAIN);
  return current_under_cgroup(*cgroup) ? 1 : 0;
}

}  // namespace

void add_perf_event_helpers(std::vector<HelperFn>& table) {
  set_helper(table, BPF_FUNC_perf_event_output, perf_event_output);
  set_helper(table, BPF_FUNC_perf_prog_read_value, perf_prog_read_value);
  set_helper(table, BPF_FUNC_get_stackid, get_stackid);
  set_helper(table, BPF_FUNC_get_stack, get_stack);
  set_helper(table, BPF_FUNC_perf_event_read, perf_event_read);
  set_helper(table, BPF_FUNC_perf_event_read_value, perf_event_read_value);
  set_helper(table, BPF_FUNC_get_attach_cookie, get_attach_cookie);
  set_helper(table, BPF_FUNC_read_branch_records, read_branch_records);
  set_helper(table, BPF_FUNC_get_current_task, get_current_task);
  set_helper(table, BPF_FUNC_get_current_task_btf, get_current_task);
  set_helper(table, BPF_FUNC_find_vma, find_vma_unresolved);
  set_helper(table, BPF_FUNC_probe_read_kernel, probe_read_kernel);
  set_helper(table, BPF_FUNC_probe_read_kernel_str, probe_read_kernel_str);
  set_helper(table, BPF_FUNC_probe_read, probe_read_compat);
  set_helper(table, BPF_FUNC_probe_read_str, probe_read_compat_str);
  set_helper(table, BPF_FUNC_get_current_cgroup_id, get_current_cgroup_id);
  set_helper(table, BPF_FUNC_get_current_ancestor_cgroup_id, get_current_ancestor_cgroup_id);
  set_helper(table, BPF_FUNC_current_task_under_cgroup, current_task_under_cgroup);
}

std::vector<HelperFn> perf_event_helper_table() {
  std::vector<HelperFn> table;
  add_base_helpers(table);
  add_perf_event_helpers(table);
  return table;
}

}  // namespace userperf::bpf
