#include "bpf/isa/program_image.hpp"

namespace userperf::bpf {

bool program_calls_helper(const ProgramImage& program, std::int32_t id) {
  for (const Insn& insn : program.insns) {
    if (insn.code == (BPF_JMP | BPF_CALL) && insn.src_reg == 0 && insn.imm == id) return true;
  }
  return false;
}

}  // namespace userperf::bpf
