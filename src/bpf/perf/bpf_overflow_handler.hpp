// A verified perf_event program as an event's overflow handler (PERF_EVENT_IOC_SET_BPF): at each
// overflow it runs with the sample as its context; 0 drops the sample and its side effects,
// non-zero lets the normal output run (bpf_overflow_handler in the kernel's __perf_event_overflow).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "bpf/jit/jit.hpp"
#include "bpf/runtime/bpf_object.hpp"
#include "core/event.hpp"

namespace userperf::bpf {

class BpfOverflowHandler : public core::OverflowHandler {
 public:
  explicit BpfOverflowHandler(std::shared_ptr<LoadedProgram> program)
      : program_(std::move(program)),
        task_layout_(&program_->object()->image().task_layout),
        leaf_(program_->jit_code() != nullptr ? program_->jit_code()->leaf_entry() : nullptr) {}

  // SIGNAL-SAFE. Runs are not counted: a locked increment per sample on a counter every thread
  // shares cost more than the filter's instructions (docs/benchmarks.md §6b), and the kernel
  // counts them only while bpf_stats_enabled is set. A run on a thread that is already running a
  // program (a signal nested in a handler) drops the sample, as the kernel's per-CPU
  // bpf_prog_active guard. A run the checked interpreter stops (a fault: a verifier bug) keeps the
  // sample and counts in faults().
  bool on_overflow(core::Event& event, const core::SampleData& data) override;
  // The program type must be PERF_EVENT (EINVAL); a precise event whose program reads stacks
  // needs full callchains in its samples (EPROTO), as perf_event_set_bpf_handler.
  int can_attach(const core::Event& event) const override;

  const LoadedProgram& program() const { return *program_; }
  const std::shared_ptr<LoadedProgram>& shared_program() const { return program_; }
  std::uint64_t faults() const { return faults_.load(std::memory_order_relaxed); }
  std::uint64_t recursion_misses() const { return misses_.load(std::memory_order_relaxed); }

 private:
  std::shared_ptr<LoadedProgram> program_;
  // Looked up once at attach, not per sample.
  const KernelTaskLayout* task_layout_;
  // The program's JIT code when it is a leaf (Jit::leaf_entry), called with the context alone:
  // the sample path of most filters. nullptr: every run goes through run_with_regions().
  Jit::LeafEntry leaf_;

  // The run of a program that is not a JIT leaf: its whole context, the memory regions it may
  // reach and storage for bpf_find_vma's mapping, on a stack frame the leaf path does not pay for.
  [[gnu::noinline]] RunResult run_with_regions(core::Event& event,
                                               const core::SampleData& data) const;
  std::atomic<std::uint64_t> faults_{0};
  std::atomic<std::uint64_t> misses_{0};
};

}  // namespace userperf::bpf
