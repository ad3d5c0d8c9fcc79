// Instructions as the conformance suite's `-- raw` words and as the plugin protocol's bytes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bpf/isa/insn.hpp"
#include "support/expected.hpp"

namespace userperf::bpf {

// The 64-bit little-endian word of an instruction: opcode in the low byte, imm in the high half.
std::uint64_t insn_to_word(const Insn& insn);
Insn insn_from_word(std::uint64_t word);

// The in-memory bytes of a program (8 per instruction, struct bpf_insn layout on a little-endian
// host) and back. A byte count that is not a multiple of 8 is EINVAL.
std::vector<std::uint8_t> insns_to_bytes(std::span<const Insn> insns);
Expected<std::vector<Insn>> insns_from_bytes(std::span<const std::uint8_t> bytes);

// Hex byte pairs separated by white space ("b7 00 00 00  01 00 00 00"), as bpf_conformance passes
// programs and memory; each pair may also stand alone or be run together ("b700000001000000").
Expected<std::vector<std::uint8_t>> parse_hex_bytes(std::string_view text);
std::string format_hex_bytes(std::span<const std::uint8_t> bytes);

}  // namespace userperf::bpf
