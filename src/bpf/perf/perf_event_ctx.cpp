#include "bpf/perf/perf_event_ctx.hpp"

#include <cstddef>

namespace userperf::bpf {

const std::uint64_t kNoRegs[PERF_REG_X86_64_MAX] = {};

namespace {

// x86-64 struct pt_regs, in uapi order (asm/ptrace.h), as perf_event_x86_regs indices; orig_ax
// has no perf register (-1: reads as 0).
constexpr int kPtRegsToPerf[21] = {
    PERF_REG_X86_R15, PERF_REG_X86_R14, PERF_REG_X86_R13, PERF_REG_X86_R12,   PERF_REG_X86_BP,
    PERF_REG_X86_BX,  PERF_REG_X86_R11, PERF_REG_X86_R10, PERF_REG_X86_R9,    PERF_REG_X86_R8,
    PERF_REG_X86_AX,  PERF_REG_X86_CX,  PERF_REG_X86_DX,  PERF_REG_X86_SI,    PERF_REG_X86_DI,
    -1 /* orig_ax */, PERF_REG_X86_IP,  PERF_REG_X86_CS,  PERF_REG_X86_FLAGS, PERF_REG_X86_SP,
    PERF_REG_X86_SS};

PerfEventCtxLayout make_layout() {
  PerfEventCtxLayout layout;
  layout.sample_ptr = offsetof(PerfEventRunCtx, sample);
  layout.period = offsetof(core::SampleData, period);
  layout.addr = offsetof(core::SampleData, addr);
  layout.regs_ptr = offsetof(PerfEventRunCtx, regs);
  for (int i = 0; i < 21; ++i) {
    layout.regs[i] = static_cast<std::int16_t>(kPtRegsToPerf[i] < 0 ? -1 : kPtRegsToPerf[i] * 8);
  }
  return layout;
}

MemoryRegion read_only(const void* p, std::size_t size) {
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  return MemoryRegion{begin, begin + size, false};
}

}  // namespace

PerfEventRunRegions::PerfEventRunRegions(const PerfEventRunCtx& ctx)
    : regions{read_only(&ctx, sizeof ctx), read_only(ctx.sample, sizeof *ctx.sample),
              read_only(ctx.regs, sizeof kNoRegs)} {}

const PerfEventCtxLayout& perf_event_ctx_layout() {
  static const PerfEventCtxLayout layout = make_layout();
  return layout;
}

}  // namespace userperf::bpf
