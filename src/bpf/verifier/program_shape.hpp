// The checks the kernel makes before walking any path (resolve_pseudo_ldimm64, check_subprogs,
// check_cfg), and what the walk needs from them: subprogram bounds, prune points and the
// registers live at each instruction.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "bpf/isa/program_image.hpp"

namespace userperf::bpf {

class VerifierLog;

struct Subprog {
  std::uint32_t start = 0;
  std::uint32_t end = 0;  // one past the last instruction
};

struct ProgramShape {
  std::vector<Subprog> subprogs;          // sorted by start; subprogs[0] is the main program
  std::vector<std::uint16_t> subprog_of;  // per instruction
  std::vector<std::uint8_t> prune_point;  // per instruction: states are compared here
  std::vector<std::uint16_t> live_in;     // per instruction: registers read before written
};

// bpf_opcode_in_insntable: the opcodes the kernel knows (cBPF carry-overs included).
bool opcode_known(std::uint8_t code);

// Returns 0, or the kernel's errno with its message as `log`'s rejection reason.
int check_program_shape(std::span<const Insn> insns, const std::vector<MapSpec>* maps,
                        ProgramShape& shape, VerifierLog& log);

// A call of a helper that calls a callback (bpf_loop, bpf_find_vma): its callback returns to it.
inline bool calls_callback(const Insn& in) {
  return in.code == (BPF_JMP | BPF_CALL) && in.src_reg == 0 &&
         (in.imm == BPF_FUNC_loop || in.imm == BPF_FUNC_find_vma);
}

// The number of helper arguments the kernel checks (for liveness).
int helper_arg_count(std::int32_t helper_id);

}  // namespace userperf::bpf
