#include "bpf/isa/disassembler.hpp"

#include <cinttypes>
#include <cstdio>

#include "bpf/isa/encoding.hpp"
#include "bpf/isa/helper_names.hpp"
#include "bpf/isa/mnemonics.hpp"
#include "bpf/isa/opcode_facts.hpp"
#include "support/hex.hpp"

namespace userperf::bpf {

namespace {

std::string reg(int r) {
  return "%r" + std::to_string(r);
}

std::string signed_offset(std::int64_t value) {
  return (value < 0 ? "-" : "+") + std::to_string(value < 0 ? -value : value);
}

std::string memory(int r, std::int16_t off) {
  return "[" + reg(r) + (off == 0 ? "" : signed_offset(off)) + "]";
}

std::string raw(const Insn& insn) {
  char text[32];
  std::snprintf(text, sizeof(text), "raw 0x%016" PRIx64, insn_to_word(insn));
  return text;
}

std::string_view size_name(std::uint8_t code) {
  return mnemonics::kSizes[insn_size(code) >> 3];
}

std::string alu(const Insn& insn) {
  const bool alu64 = insn_class(insn.code) == BPF_ALU64;
  const std::uint8_t op = insn_op(insn.code);
  const char* suffix = alu64 ? "" : "32";
  if (op == BPF_END) {
    std::string name = alu64 ? "bswap" : insn_source(insn.code) == BPF_TO_BE ? "be" : "le";
    return name + std::to_string(insn.imm) + " " + reg(insn.dst_reg);
  }
  if (op == BPF_NEG) return "neg" + std::string(suffix) + " " + reg(insn.dst_reg);
  if (op == BPF_MOV && insn.off != 0) {
    return "movsx" + std::to_string(insn.off) + (alu64 ? "64 " : "32 ") + reg(insn.dst_reg) + ", " +
           reg(insn.src_reg);
  }
  std::string name(mnemonics::kAluOps[op >> 4]);
  if ((op == BPF_DIV || op == BPF_MOD) && insn.off == 1) name = "s" + name;
  std::string operand =
      insn_source(insn.code) == BPF_X ? reg(insn.src_reg) : std::to_string(insn.imm);
  return name + suffix + " " + reg(insn.dst_reg) + ", " + operand;
}

std::string jump(const Insn& insn, const DisassembleOptions& options) {
  const bool jmp32 = insn_class(insn.code) == BPF_JMP32;
  const std::uint8_t op = insn_op(insn.code);
  switch (op) {
    case BPF_JA:
      return jmp32 ? "ja32 " + signed_offset(insn.imm) : "ja " + signed_offset(insn.off);
    case BPF_EXIT:
      return "exit";
    case BPF_CALL:
      if (insn_source(insn.code) == BPF_X) return "call " + reg(insn.dst_reg);
      if (insn.src_reg == BPF_PSEUDO_CALL) return "call local " + signed_offset(insn.imm);
      if (insn.src_reg == BPF_PSEUDO_KFUNC_CALL) return "call kfunc " + std::to_string(insn.imm);
      if (options.helper_names) {
        if (const char* name = helper_name(insn.imm)) return std::string("call ") + name;
      }
      return "call " + std::to_string(insn.imm);
    default:
      break;
  }
  std::string operand =
      insn_source(insn.code) == BPF_X ? reg(insn.src_reg) : std::to_string(insn.imm);
  return std::string(mnemonics::kJmpOps[op >> 4]) + (jmp32 ? "32 " : " ") + reg(insn.dst_reg) +
         ", " + operand + ", " + signed_offset(insn.off);
}

std::string lddw(const Insn& first, const Insn& second, const DisassembleOptions& options) {
  std::string text = "lddw " + reg(first.dst_reg) + ", ";
  if (first.src_reg == 0) {
    std::uint64_t value = static_cast<std::uint32_t>(first.imm) |
                          static_cast<std::uint64_t>(static_cast<std::uint32_t>(second.imm)) << 32;
    return text + support::hex(value);
  }
  text += std::string(mnemonics::kLddwKinds[first.src_reg]) + ":";
  const bool by_index =
      first.src_reg == BPF_PSEUDO_MAP_IDX || first.src_reg == BPF_PSEUDO_MAP_IDX_VALUE;
  const auto index = static_cast<std::uint32_t>(first.imm);
  if (by_index && index < options.map_names.size() && !options.map_names[index].empty()) {
    text += options.map_names[index];
  } else {
    text += std::to_string(first.imm);
  }
  const bool value_kind =
      first.src_reg == BPF_PSEUDO_MAP_VALUE || first.src_reg == BPF_PSEUDO_MAP_IDX_VALUE;
  if (value_kind || second.imm != 0) text += signed_offset(second.imm);
  return text;
}

// A complete lddw: a second slot that is all zero but imm.
bool lddw_pair(std::span<const Insn> insns, std::size_t index) {
  if (!is_lddw(insns[index]) || index + 1 >= insns.size()) return false;
  const Insn& next = insns[index + 1];
  return next.code == 0 && next.dst_reg == 0 && next.src_reg == 0 && next.off == 0;
}

}  // namespace

std::size_t insn_slots(std::span<const Insn> insns, std::size_t index) {
  return lddw_pair(insns, index) && insn_valid(insns[index]) ? 2 : 1;
}

std::string disassemble_insn(std::span<const Insn> insns, std::size_t index,
                             const DisassembleOptions& options) {
  const Insn& insn = insns[index];
  if (!insn_valid(insn)) return raw(insn);
  const std::uint8_t cls = insn_class(insn.code);
  switch (cls) {
    case BPF_ALU:
    case BPF_ALU64:
      return alu(insn);
    case BPF_JMP:
    case BPF_JMP32:
      return jump(insn, options);
    case BPF_LD:
      if (is_lddw(insn)) {
        if (!lddw_pair(insns, index)) return raw(insn);
        return lddw(insn, insns[index + 1], options);
      }
      if (insn_mode(insn.code) == BPF_ABS) {
        return "ldabs" + std::string(size_name(insn.code)) + " " + std::to_string(insn.imm);
      }
      return "ldind" + std::string(size_name(insn.code)) + " " + reg(insn.src_reg) + ", " +
             std::to_string(insn.imm);
    case BPF_LDX:
      return (insn_mode(insn.code) == kModeMemsx ? "ldxs" : "ldx") +
             std::string(size_name(insn.code)) + " " + reg(insn.dst_reg) + ", " +
             memory(insn.src_reg, insn.off);
    case BPF_ST:
      return "st" + std::string(size_name(insn.code)) + " " + memory(insn.dst_reg, insn.off) +
             ", " + std::to_string(insn.imm);
    default:  // BPF_STX
      if (insn_mode(insn.code) == BPF_ATOMIC) {
        std::string name(mnemonics::atomic_op_name(insn.imm));
        const bool implied = insn.imm == BPF_XCHG || insn.imm == BPF_CMPXCHG;
        return std::string("lock ") + ((insn.imm & BPF_FETCH) && !implied ? "fetch " : "") + name +
               (insn_size(insn.code) == BPF_W ? "32 " : " ") + memory(insn.dst_reg, insn.off) +
               ", " + reg(insn.src_reg);
      }
      return "stx" + std::string(size_name(insn.code)) + " " + memory(insn.dst_reg, insn.off) +
             ", " + reg(insn.src_reg);
  }
}

std::string disassemble(std::span<const Insn> insns, const DisassembleOptions& options) {
  std::string text;
  for (std::size_t i = 0; i < insns.size(); i += insn_slots(insns, i)) {
    text += disassemble_insn(insns, i, options);
    text += '\n';
  }
  return text;
}

}  // namespace userperf::bpf
