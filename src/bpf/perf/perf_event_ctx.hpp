// The context a BPF_PROG_TYPE_PERF_EVENT program runs with. Programs are compiled against the
// uapi struct bpf_perf_event_data; the verifier rewrites their ctx loads into loads through this
// struct (perf_event_ctx_layout() tells it where things are), so this struct and core's
// SampleData are free to change.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "bpf/isa/kernel_task_layout.hpp"
#include "bpf/isa/memory_region.hpp"
#include "bpf/perf/current_task.hpp"
#include "bpf/verifier/verifier.hpp"
#include "core/event.hpp"
#include "core/sample_data.hpp"

namespace userperf::bpf {

struct PerfEventRunCtx {
  const core::SampleData* sample = nullptr;
  const std::uint64_t* regs = nullptr;  // SampleRegs::values of the interrupted context, or zeros
  core::Event* event = nullptr;
  // The running kernel's task_struct layout (the program's image): bpf_get_current_task's task.
  const KernelTaskLayout* task_layout = nullptr;
  // Where bpf_find_vma keeps the mapping it found, read by its callback through the synthetic vma:
  // storage of the run's caller (nullptr: none, and bpf_find_vma finds nothing, -ENOENT). Not a
  // member: the overflow path builds a context per sample, and most programs never call it.
  FoundVma* vma = nullptr;
};

// What the programs' rewritten ctx loads read (perf_event_ctx_layout): the first two members of
// PerfEventRunCtx. The rest is the helpers' (CallContext::env), so a run that calls no helper (a
// JIT leaf) is given only this.
struct PerfEventCtxReads {
  const core::SampleData* sample;
  const std::uint64_t* regs;
};
static_assert(offsetof(PerfEventRunCtx, sample) == offsetof(PerfEventCtxReads, sample) &&
              offsetof(PerfEventRunCtx, regs) == offsetof(PerfEventCtxReads, regs));

// The memory a run may read through the context: the context, the sample and the registers.
struct PerfEventRunRegions {
  std::array<MemoryRegion, 3> regions;
  explicit PerfEventRunRegions(const PerfEventRunCtx& ctx);
};

const PerfEventCtxLayout& perf_event_ctx_layout();

// Registers of no sample (a PMU that supplied none): every register reads as 0.
extern const std::uint64_t kNoRegs[PERF_REG_X86_64_MAX];

}  // namespace userperf::bpf
