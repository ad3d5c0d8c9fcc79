// Kernel-style text for the verifier log: instructions as `print_bpf_insn` shows them and register
// and stack state as `print_verifier_state` does (`R1=ctx() R10=fp0`).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "bpf/isa/program_image.hpp"
#include "bpf/verifier/verifier_state.hpp"

namespace userperf::bpf {

// "r0 = *(u64 *)(r1 +0)"; idx selects the instruction (an lddw takes its pair).
std::string disasm_insn(std::span<const Insn> insns, std::size_t idx);
std::string format_reg(const RegState& reg, const std::vector<MapSpec>* maps);
std::string format_state(const VerifierState& state, const std::vector<MapSpec>* maps);
const char* reg_type_name(const RegState& reg);  // "ctx", "map_value_or_null", "scalar", ...
const char* helper_label(std::int32_t id);       // "bpf_map_lookup_elem", or "unknown"

}  // namespace userperf::bpf
