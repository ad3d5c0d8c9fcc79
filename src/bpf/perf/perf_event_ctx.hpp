// The context a BPF_PROG_TYPE_PERF_EVENT program runs with. Programs are compiled against the
// uapi struct bpf_perf_event_data; the verifier rewrites their ctx loads into loads through this
// struct (perf_event_ctx_layout() tells it where things are), so this struct and core's
// SampleData are free to change.
#pragma once

#include <array>
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
  // The mapping bpf_find_vma found, read by its callback through the synthetic vma.
  FoundVma vma;
};

// The memory a run may read through the context: the context, the sample and the registers.
struct PerfEventRunRegions {
  std::array<MemoryRegion, 3> regions;
  explicit PerfEventRunRegions(const PerfEventRunCtx& ctx);
};

const PerfEventCtxLayout& perf_event_ctx_layout();

// Registers of no sample (a PMU that supplied none): every register reads as 0.
extern const std::uint64_t kNoRegs[PERF_REG_X86_64_MAX];

}  // namespace userperf::bpf
