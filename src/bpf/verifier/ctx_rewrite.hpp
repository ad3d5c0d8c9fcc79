// pe_prog_convert_ctx_access for userperf: each verified load from struct bpf_perf_event_data
// becomes a load of a pointer from the internal context and a load through it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "bpf/verifier/verifier.hpp"
#include "support/expected.hpp"

namespace userperf::bpf {

inline constexpr int kPerfCtxSize = 184;       // sizeof(struct bpf_perf_event_data), x86-64
inline constexpr int kPerfCtxPeriodOff = 168;  // sample_period
inline constexpr int kPerfCtxAddrOff = 176;    // addr

// The instructions that replace `load` (an LDX from the ctx that the verifier accepted).
std::vector<Insn> convert_ctx_load(const Insn& load, const PerfEventCtxLayout& layout);

// Rewrites the loads at `ctx_loads` (instruction indexes) and fixes every jump around them; the
// functions' starts in `stacks` move with their instructions.
Expected<std::vector<Insn>> rewrite_ctx_loads(std::span<const Insn> insns,
                                              const std::vector<std::size_t>& ctx_loads,
                                              const PerfEventCtxLayout& layout,
                                              std::vector<FunctionStack>& stacks);

}  // namespace userperf::bpf
