#include "report/user_regs.hpp"

#include <asm/perf_regs.h>

#include <bit>

namespace userperf::report {

bool UserRegs::load(const abi::SampleRegsValues& regs) {
  mask_ = 0;
  if (regs.abi != PERF_SAMPLE_REGS_ABI_64) return false;
  if (static_cast<std::size_t>(std::popcount(regs.mask)) != regs.values.size()) return false;
  std::size_t next = 0;
  for (int bit = 0; bit < 64; ++bit) {
    if (regs.mask & (1ULL << bit)) values_[bit] = regs.values[next++];
  }
  mask_ = regs.mask;
  return true;
}

bool UserRegs::get(int reg, std::uint64_t& value) const {
  if (reg < 0 || reg >= 64 || !(mask_ & (1ULL << reg))) return false;
  value = values_[reg];
  return true;
}

bool UserRegs::dwarf_registers(std::array<std::uint64_t, 17>& out) const {
  // DWARF order rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip, as perf register numbers.
  static constexpr int kPerfOfDwarf[17] = {
      PERF_REG_X86_AX,  PERF_REG_X86_DX,  PERF_REG_X86_CX,  PERF_REG_X86_BX,  PERF_REG_X86_SI,
      PERF_REG_X86_DI,  PERF_REG_X86_BP,  PERF_REG_X86_SP,  PERF_REG_X86_R8,  PERF_REG_X86_R9,
      PERF_REG_X86_R10, PERF_REG_X86_R11, PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14,
      PERF_REG_X86_R15, PERF_REG_X86_IP};
  for (int i = 0; i < 17; ++i) {
    if (!get(kPerfOfDwarf[i], out[i])) return false;
  }
  return true;
}

}  // namespace userperf::report
