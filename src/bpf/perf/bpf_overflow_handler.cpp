// SIGNAL-SAFE: see bpf_overflow_handler.hpp.
#include "bpf/perf/bpf_overflow_handler.hpp"

#include <cerrno>

#include "bpf/perf/perf_event_ctx.hpp"
#include "bpf/vm/interpreter.hpp"

namespace userperf::bpf {

namespace {
// Initial-exec, as every TLS variable the signal path touches: no __tls_get_addr call.
__attribute__((tls_model("initial-exec"))) constinit thread_local bool t_program_active = false;
}  // namespace

bool BpfOverflowHandler::on_overflow(core::Event& event, const core::SampleData& data) {
  if (t_program_active) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  t_program_active = true;
  // The program's r1 and the helpers' env are the same context.
  const core::SampleRegs* regs = data.extra().regs_intr;
  PerfEventRunCtx ctx{&data, regs != nullptr ? regs->values : kNoRegs, &event, task_layout_};
  // The regions only for a run that reads them (a JIT leaf does not: LoadedProgram::reads_regions).
  RunResult result;
  if (reads_regions_) {
    const PerfEventRunRegions regions(ctx);
    result = program_->run(&ctx, regions.regions, &ctx);
  } else {
    result = program_->run(&ctx, {}, &ctx);
  }
  t_program_active = false;
  if (result.status != RunStatus::kOk) {
    faults_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  return result.r0 != 0;
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
