// The conformance suite on the JIT: the programs are not verified, so they run as checked code
// (memory checks against the test's memory and the stack, a budget of backward jumps and calls).
#pragma once

#include <cstdint>
#include <span>

#include "bpf/vm/conformance.hpp"

namespace userperf::bpf {

// As run_conformance_program, on the checked JIT (a ConformanceRunner).
Expected<RunResult> run_conformance_program_jit(std::span<const Insn> insns,
                                                std::span<std::uint8_t> memory);

}  // namespace userperf::bpf
