#include "bpf/jit/jit_conformance.hpp"

#include "bpf/jit/jit.hpp"

namespace userperf::bpf {

Expected<RunResult> run_conformance_program_jit(std::span<const Insn> insns,
                                                std::span<std::uint8_t> memory) {
  JitOptions options;
  options.helpers.resize(kUnwindHelper + 1);
  options.helpers[kUnwindHelper] = conformance_unwind_helper;
  options.checked = true;
  options.budget = kConformanceBudget;
  auto jit = Jit::load(insns, std::move(options));
  if (!jit) return jit.error();
  const auto begin = reinterpret_cast<std::uintptr_t>(memory.data());
  const MemoryRegion region{begin, begin + memory.size(), true};
  std::span<const MemoryRegion> regions;
  if (!memory.empty()) regions = std::span<const MemoryRegion>(&region, 1);
  return (*jit)->run(memory.empty() ? 0 : begin, memory.size(), regions, nullptr);
}

}  // namespace userperf::bpf
