// A sample's PERF_SAMPLE_REGS_USER values by x86-64 perf register number (PERF_REG_X86_* of
// asm/perf_regs.h), and the DWARF register file libdw's x86-64 unwinder starts from.
#pragma once

#include <array>
#include <cstdint>

#include "abi/sample_parser.hpp"

namespace userperf::report {

// Indexes of UserRegs::dwarf_registers.
inline constexpr int kDwarfSp = 7;
inline constexpr int kDwarfIp = 16;

class UserRegs {
 public:
  // False when the sample has no registers (abi 0), a 32-bit abi, or a mask/value count mismatch.
  bool load(const abi::SampleRegsValues& regs);
  // False when `reg` was not sampled.
  bool get(int reg, std::uint64_t& value) const;

  // DWARF x86-64 numbering 0..16: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip. False when one of
  // them was not sampled.
  bool dwarf_registers(std::array<std::uint64_t, 17>& out) const;

 private:
  std::array<std::uint64_t, 64> values_{};
  std::uint64_t mask_ = 0;
};

}  // namespace userperf::report
