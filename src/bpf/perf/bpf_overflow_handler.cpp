// SIGNAL-SAFE: see bpf_overflow_handler.hpp.
#include "bpf/perf/bpf_overflow_handler.hpp"

#include <cerrno>

#include "bpf/perf/perf_event_ctx.hpp"
#include "bpf/vm/interpreter.hpp"

namespace userperf::bpf {

namespace {
// Initial-exec, as every TLS variable the signal path touches: no __tls_get_addr call.
__attribute__((tls_model("initial-exec"))) constinit thread_local bool t_program_active = false;

const std::uint64_t* regs_of(const core::SampleData& data) {
  const core::SampleRegs* regs = data.extra().regs_intr;
  return regs != nullptr ? regs->values : kNoRegs;
}
}  // namespace

bool BpfOverflowHandler::on_overflow(core::Event& event, const core::SampleData& data) {
  if (t_program_active) [[unlikely]] {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  t_program_active = true;
  // The sample path of most filters: a leaf reads only what its ctx loads reach, and cannot fail.
  if (leaf_ != nullptr) [[likely]] {
    const PerfEventCtxReads reads{&data, regs_of(data)};
    const std::uint64_t r0 = leaf_(reinterpret_cast<std::uintptr_t>(&reads), 0);
    t_program_active = false;
    return r0 != 0;
  }
  const RunResult result = run_with_regions(event, data);
  t_program_active = false;
  if (result.status != RunStatus::kOk) {
    faults_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  return result.r0 != 0;
}

RunResult BpfOverflowHandler::run_with_regions(core::Event& event,
                                               const core::SampleData& data) const {
  // The program's r1 and the helpers' env are the same context.
  FoundVma vma;
  PerfEventRunCtx ctx{&data, regs_of(data), &event, task_layout_, &vma};
  const PerfEventRunRegions regions(ctx);
  return program_->run(&ctx, regions.regions, &ctx);
}

int BpfOverflowHandler::can_attach(const core::Event& event) const {
  if (program_->image().prog_type != BPF_PROG_TYPE_PERF_EVENT) return -EINVAL;
  const bool reads_stacks =
      program_->calls_helper(BPF_FUNC_get_stackid) || program_->calls_helper(BPF_FUNC_get_stack);
  if (event.attr.precise_ip && reads_stacks &&
      (!(event.attr.sample_type & PERF_SAMPLE_CALLCHAIN) || event.attr.exclude_callchain_kernel ||
       event.attr.exclude_callchain_user)) {
    return -EPROTO;
  }
  return 0;
}

}  // namespace userperf::bpf
