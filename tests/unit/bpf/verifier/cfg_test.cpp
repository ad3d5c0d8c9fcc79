// Structure checks made before any path is walked: EINVAL for malformed programs.
#include "verifier_test_support.hpp"

namespace userperf::bpf::verifier_test {
namespace {

constexpr Insn mov0 = make_insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
constexpr Insn exit_insn = make_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);

TEST(VerifierCfg, MinimalProgramIsAccepted) {
  const VerifyResult r = verify_insns({mov0, exit_insn});
  EXPECT_TRUE(accepted(r));
  EXPECT_EQ(r.processed_insns, 2u);
  EXPECT_EQ(r.insns.size(), 2u);
}

TEST(VerifierCfg, EmptyProgramIsTooBig) {
  EXPECT_TRUE(rejected(verify_insns({}), E2BIG, ""));
}

TEST(VerifierCfg, LastInsnMustBeExitOrJump) {
  EXPECT_TRUE(rejected(verify_insns({mov0, mov0}), EINVAL, "last insn is not an exit or jmp"));
}

TEST(VerifierCfg, JumpOutOfRange) {
  EXPECT_TRUE(rejected(verify_text("mov %r0, 0\nja +5\nexit\n"), EINVAL, "jump out of range"));
  EXPECT_TRUE(rejected(verify_text("mov %r0, 0\njeq %r0, 0, -3\nexit\n"), EINVAL,
                       "jump out of range from insn 1 to -1"));
}

TEST(VerifierCfg, UnreachableInstruction) {
  EXPECT_TRUE(
      rejected(verify_text("mov %r0, 0\nexit\nmov %r0, 1\nexit\n"), EINVAL, "unreachable insn 2"));
  EXPECT_TRUE(
      rejected(verify_text("mov %r0, 0\nja +1\nmov %r0, 1\nexit\n"), EINVAL, "unreachable insn 2"));
}

TEST(VerifierCfg, UnknownOpcodeAndReservedFields) {
  EXPECT_TRUE(rejected(verify_insns({make_insn(0xff, 0, 0, 0, 0), exit_insn}), EINVAL,
                       "unknown opcode ff"));
  // callx (clang -O0) is not in the kernel's table.
  EXPECT_TRUE(
      rejected(verify_insns({mov0, make_insn(BPF_JMP | BPF_CALL | BPF_X, 1, 0, 0, 0), exit_insn}),
               EINVAL, "unknown opcode 8d"));
  EXPECT_TRUE(
      rejected(verify_insns({make_insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 3, 0, 0), exit_insn}),
               EINVAL, "BPF_MOV uses reserved fields"));
  EXPECT_TRUE(
      rejected(verify_insns({make_insn(BPF_ALU64 | BPF_ADD | BPF_K, 0, 0, 2, 0), exit_insn}),
               EINVAL, "BPF_ALU uses reserved fields"));
  EXPECT_TRUE(rejected(verify_insns({mov0, make_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 1)}), EINVAL,
                       "BPF_EXIT uses reserved fields"));
  EXPECT_TRUE(
      rejected(verify_insns({mov0, make_insn(BPF_LDX | BPF_MEM | BPF_DW, 0, 1, 0, 5), exit_insn}),
               EINVAL, "BPF_LDX uses reserved fields"));
}

TEST(VerifierCfg, LddwPairs) {
  // Truncated: the second half is missing.
  EXPECT_TRUE(rejected(verify_insns({mov0, make_insn(BPF_LD | BPF_IMM | BPF_DW, 1, 0, 0, 1)}),
                       EINVAL, "invalid bpf_ld_imm64 insn"));
  // A jump into the second half.
  EXPECT_TRUE(rejected(verify_insns({mov0, make_insn(BPF_JMP | BPF_JA, 0, 0, 1, 0),
                                     make_insn(BPF_LD | BPF_IMM | BPF_DW, 1, 0, 0, 1),
                                     make_insn(0, 0, 0, 0, 0), exit_insn}),
                       EINVAL, "jump into the middle of ldimm64 insn 3"));
  EXPECT_TRUE(accepted(verify_text("lddw %r0, 0x123456789\nexit\n")));
  // Unknown pseudo source.
  EXPECT_TRUE(rejected(verify_insns({make_insn(BPF_LD | BPF_IMM | BPF_DW, 1, 9, 0, 1),
                                     make_insn(0, 0, 0, 0, 0), mov0, exit_insn}),
                       EINVAL, "unrecognized bpf_ld_imm64 insn"));
}

TEST(VerifierCfg, LddwMapReferences) {
  // An index past the object's maps: only userperf is asked (the kernel is given descriptors).
  const VerifyResult no_map =
      verify_insns({make_insn(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_IDX, 0, 99),
                    make_insn(0, 0, 0, 0, 0), mov0, exit_insn});
  EXPECT_TRUE(rejected(no_map, EBADF, "fd_idx 99 is not pointing to valid bpf_map"));
  // A value offset of BPF_MAX_VAR_OFF into .bss (map 5).
  EXPECT_TRUE(rejected(
      verify_insns({make_insn(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_IDX_VALUE, 0, 5),
                    make_insn(0, 0, 0, 0, 1 << 29), mov0, exit_insn}),
      EINVAL, "direct value offset of 536870912 is not allowed"));
}

TEST(VerifierCfg, CallToInvalidDestination) {
  EXPECT_TRUE(rejected(
      verify_insns({mov0, make_insn(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 7), exit_insn}),
      EINVAL, "call to invalid destination"));
}

TEST(VerifierCfg, OnlyPerfEventPrograms) {
  ProgramImage program;
  program.insns = {mov0, exit_insn};
  VerifyOptions options;
  options.prog_type = BPF_PROG_TYPE_XDP;
  EXPECT_TRUE(rejected(verify(program, options), EINVAL, "only BPF_PROG_TYPE_PERF_EVENT"));
}

TEST(VerifierCfg, LegacyPacketLoadsAreNotForPerfEvent) {
  EXPECT_TRUE(rejected(verify_text("mov %r6, %r1\nldabsb 0\nexit\n"), EINVAL,
                       "BPF_LD_[ABS|IND] instructions not allowed"));
}

}  // namespace
}  // namespace userperf::bpf::verifier_test
