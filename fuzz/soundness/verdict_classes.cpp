#include "verdict_classes.hpp"

#include <cctype>

namespace userperf::soundness {

std::string verdict_class(std::string_view reason) {
  std::string out;
  bool in_number = false;
  for (std::size_t i = 0; i < reason.size(); ++i) {
    const char c = reason[i];
    const bool digit = std::isdigit(static_cast<unsigned char>(c)) != 0;
    // A number, hex or signed, is N; so is a register's index ("R3" -> "RN").
    if (digit || (in_number && (std::isxdigit(static_cast<unsigned char>(c)) || c == 'x'))) {
      if (!in_number) out += 'N';
      in_number = true;
      continue;
    }
    if (c == '-' && i + 1 < reason.size() &&
        std::isdigit(static_cast<unsigned char>(reason[i + 1]))) {
      continue;
    }
    in_number = false;
    out += c;
  }
  return out;
}

namespace {

// A conditional jump that compares a register with itself (`if r8 s<= r8`).
bool compares_a_register_with_itself(std::span<const bpf::Insn> insns) {
  for (const bpf::Insn& insn : insns) {
    const std::uint8_t cls = bpf::insn_class(insn.code);
    const std::uint8_t op = bpf::insn_op(insn.code);
    if ((cls == BPF_JMP || cls == BPF_JMP32) && op != BPF_JA && op != BPF_CALL && op != BPF_EXIT &&
        bpf::insn_source(insn.code) == BPF_X && insn.dst_reg == insn.src_reg)
      return true;
  }
  return false;
}

struct Explained {
  std::string_view verdict_class;
  bool (*applies)(std::span<const bpf::Insn> insns);
  const char* reason;
};

// "userperf accepts, the kernel rejects", understood: each with the program shape it needs, so
// that the same message from another cause still fails the campaign.
constexpr Explained kExplained[] = {
    {"math between map_value pointer and N is not allowed", compares_a_register_with_itself,
     "a register compared with itself: the branch that cannot be taken is walked by both "
     "verifiers; Linux 6.18 keeps only the tnum of its contradictory bounds and rejects a "
     "constant it then adds to a map value, userperf narrows the register to a constant that "
     "passes. The path is dead in both (docs/reliability.md)"},
    {"dereference of modified ctx ptr RN off=N disallowed", compares_a_register_with_itself,
     "a register compared with itself, as above: on the branch that cannot be taken Linux 6.18 "
     "ends with another value of the contradictory bounds than userperf (--seed 20261129, "
     "program 121804: the kernel 32, userperf 0) and refuses ctx + 32, which userperf's ctx + 0 "
     "passes. The path is dead in both"},
    {"cannot return stack pointer to the caller", compares_a_register_with_itself,
     "a register compared with itself, as above (--seed 20261129, program 168768: `if w8 s<= "
     "w8`, where Linux 6.18 logs a REG INVARIANTS VIOLATION on the branch that cannot be taken): "
     "there the kernel walks a call whose callee returns a stack pointer, which userperf's value "
     "of the register skips. The path is dead in both"},
};

}  // namespace

const char* explained_kernel_rejection(std::string_view verdict_class,
                                       std::span<const bpf::Insn> insns) {
  for (const Explained& e : kExplained) {
    if (verdict_class == e.verdict_class && e.applies(insns)) return e.reason;
  }
  return nullptr;
}

}  // namespace userperf::soundness
