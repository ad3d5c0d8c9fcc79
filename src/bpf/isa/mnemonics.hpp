// The mnemonic spellings shared by the assembler and the disassembler (bpf_conformance's syntax).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "bpf/isa/insn.hpp"

namespace userperf::bpf::mnemonics {

// ALU operations by op >> 4 (neg and end have their own syntax; "" = none).
inline constexpr std::array<std::string_view, 14> kAluOps = {
    "add", "sub", "mul", "div", "or", "and", "lsh", "rsh", "neg", "mod", "xor", "mov", "arsh", ""};
// Conditional jumps by op >> 4 ("" = ja, call, exit or none).
inline constexpr std::array<std::string_view, 14> kJmpOps = {
    "", "jeq", "jgt", "jge", "jset", "jne", "jsgt", "jsge", "", "", "jlt", "jle", "jslt", "jsle"};
// Access sizes by size >> 3: BPF_W, BPF_H, BPF_B, BPF_DW.
inline constexpr std::array<std::string_view, 4> kSizes = {"w", "h", "b", "dw"};
// lddw pseudo sources by src_reg (1..6): `lddw %rN, KIND:ARG[+OFF]`.
inline constexpr std::array<std::string_view, 7> kLddwKinds = {
    "", "map_fd", "map_value_fd", "btf_id", "func", "map", "map_value"};

// Atomic operation names by imm without BPF_FETCH (xchg and cmpxchg have it built in).
constexpr std::string_view atomic_op_name(std::int32_t imm) {
  switch (imm & ~BPF_FETCH) {
    case BPF_ADD:
      return "add";
    case BPF_OR:
      return "or";
    case BPF_AND:
      return "and";
    case BPF_XOR:
      return "xor";
    case BPF_XCHG & ~BPF_FETCH:
      return "xchg";
    case BPF_CMPXCHG & ~BPF_FETCH:
      return "cmpxchg";
    default:
      return "";
  }
}

}  // namespace userperf::bpf::mnemonics
