// Replaces single instructions with sequences and keeps every jump and local call pointing at the
// same instruction as before (the kernel's bpf_patch_insn_data, as a one-pass rebuild).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "bpf/isa/insn.hpp"
#include "support/expected.hpp"

namespace userperf::bpf {

class InsnPatcher {
 public:
  explicit InsnPatcher(std::span<const Insn> insns) : insns_(insns) {}
  // Instruction `index` (not a jump or call) becomes `replacement`.
  void replace(std::size_t index, std::vector<Insn> replacement);
  // The rebuilt program; ERANGE when a jump no longer fits its 16-bit offset.
  Expected<std::vector<Insn>> apply() const;
  // Where old instruction `index` starts in apply()'s program (index == size: its length).
  std::size_t new_index(std::size_t index) const;

 private:
  std::span<const Insn> insns_;
  std::map<std::size_t, std::vector<Insn>> patches_;
};

}  // namespace userperf::bpf
