// The stack: bounds, alignment, spills and fills, per-byte initialization (privileged rules); and
// the alignment of atomics on every pointer.
#include "verifier_test_support.hpp"

namespace userperf::bpf::verifier_test {
namespace {

TEST(VerifierStack, Bounds) {
  EXPECT_TRUE(accepted(verify_text("stdw [%r10-512], 1\nmov %r0, 0\nexit\n")));
  EXPECT_TRUE(rejected(verify_text("stdw [%r10-520], 1\nmov %r0, 0\nexit\n"), EACCES,
                       "invalid write to stack R10 off=-520 size=8"));
  EXPECT_TRUE(rejected(verify_text("stdw [%r10+0], 1\nmov %r0, 0\nexit\n"), EACCES,
                       "invalid write to stack R10 off=0 size=8"));
  EXPECT_TRUE(
      rejected(verify_text("ldxw %r0, [%r10-2]\nexit\n"), EACCES, "misaligned stack access"));
  EXPECT_TRUE(rejected(verify_text("ldxdw %r0, [%r10+8]\nexit\n"), EACCES,
                       "invalid read from stack R10 off=8 size=8"));
}

TEST(VerifierStack, StackDepthIsReported) {
  const VerifyResult r = verify_text("stw [%r10-4], 1\nstdw [%r10-40], 1\nmov %r0, 0\nexit\n");
  ASSERT_TRUE(accepted(r));
  EXPECT_EQ(r.stack_depth, 48u);  // 40 rounded up to 16, as the x86-64 JIT does
}

TEST(VerifierStack, UninitializedStackReadsArePrivileged) {
  // CAP_PERFMON loads may read stack bytes never written (allow_uninit_stack).
  const VerifyResult r = verify_text("ldxdw %r0, [%r10-8]\nexit\n");
  EXPECT_TRUE(accepted(r));
}

TEST(VerifierStack, SpillAndFillKeepPointerTypes) {
  // ctx spilled and filled back is still ctx: the load through it is a ctx access.
  EXPECT_TRUE(accepted(
      verify_text("stxdw [%r10-8], %r1\nldxdw %r2, [%r10-8]\nldxdw %r0, [%r2+168]\nexit\n")));
  // A partial overwrite turns the spill into data: loading through it is a scalar access.
  EXPECT_TRUE(rejected(verify_text("stxdw [%r10-8], %r1\nstb [%r10-8], 0\nldxdw %r2, [%r10-8]\n"
                                   "ldxdw %r0, [%r2+168]\nexit\n"),
                       EACCES, "R2 invalid mem access 'scalar'"));
  // Spilled pointers must be 8 bytes and read back whole.
  EXPECT_TRUE(rejected(verify_text("stxw [%r10-8], %r1\nmov %r0, 0\nexit\n"), EACCES,
                       "invalid size of register spill"));
  EXPECT_TRUE(rejected(verify_text("stxdw [%r10-8], %r1\nldxw %r0, [%r10-8]\nexit\n"), EACCES,
                       "invalid size of register fill"));
}

TEST(VerifierStack, ScalarSpillsKeepBounds) {
  // A constant spilled and filled stays a constant: the index into the map value is known.
  const char* program = R"(
    mov %r6, 12
    stxdw [%r10-16], %r6
    stw [%r10-4], 0
    mov %r2, %r10
    add %r2, -4
    lddw %r1, map:array
    call map_lookup_elem
    jeq %r0, 0, out
    ldxdw %r6, [%r10-16]
    add %r0, %r6
    ldxw %r0, [%r0+0]
    exit
  out:
    mov %r0, 0
    exit
  )";
  EXPECT_TRUE(accepted(verify_text(program)));
  std::string bad = program;
  bad.replace(bad.find("mov %r6, 12"), 11, "mov %r6, 13");
  EXPECT_TRUE(rejected(verify_text(bad), EACCES,
                       "invalid access to map value, value_size=16 off=13 size=4"));
}

TEST(VerifierStack, ZeroBytesReadBackAsZero) {
  // Two unaligned 2-byte zero stores read as one 4-byte constant 0, so the branch is known.
  EXPECT_TRUE(accepted(verify_text(R"(
    sth [%r10-2], 0
    sth [%r10-4], 0
    ldxw %r2, [%r10-4]
    jeq %r2, 0, ok
    ldxdw %r0, [%r2+0]
  ok:
    mov %r0, 0
    exit
  )")));
}

TEST(VerifierStack, VariableOffsetAccessesArePrivileged) {
  EXPECT_TRUE(accepted(verify_text(R"(
    call get_prandom_u32
    and %r0, 8
    mov %r2, %r10
    add %r2, -16
    add %r2, %r0
    stdw [%r2+0], 1
    ldxdw %r0, [%r2+0]
    exit
  )")));
  EXPECT_TRUE(rejected(verify_text(R"(
    call get_prandom_u32
    and %r0, 16
    mov %r2, %r10
    add %r2, -16
    add %r2, %r0
    stdw [%r2+0], 1
    mov %r0, 0
    exit
  )"),
                       EINVAL, "invalid variable-offset write to stack R2"));
}

// Atomics are aligned to their size on every pointer (check_ptr_alignment's strict_alignment_once),
// where x86-64 lets plain loads and stores of a map value be unaligned: the kernel rejects an
// atomic at map value + 15 with EACCES, and the interpreter would fault on it
// (../shared/repro/misaligned-atomic-map-value.bpf.c). The kernel gives the same verdicts.
TEST(VerifierMemory, AtomicsAreAlignedOnEveryPointer) {
  const auto program = [](const char* access) {
    return std::string(R"(
    stw [%r10-4], 0
    mov %r2, %r10
    add %r2, -4
    lddw %r1, map:array
    call map_lookup_elem
    jeq %r0, 0, out
    mov %r1, 1
    )") + access +
           R"(
out:
    mov %r0, 0
    exit
)";
  };
  for (const char* misaligned :
       {"lock add32 [%r0+15], %r1", "lock add32 [%r0+2], %r1", "lock add [%r0+4], %r1",
        "lock fetch add [%r0+1], %r1", "lock xchg32 [%r0+6], %r1"}) {
    const Outcome r = verify_text(program(misaligned));
    EXPECT_TRUE(rejected(r, EACCES, "misaligned value access off")) << misaligned;
    EXPECT_TRUE(kernel_agrees(r)) << misaligned;
  }
  for (const char* fine : {"lock add32 [%r0+12], %r1", "lock add [%r0+8], %r1", "stxw [%r0+7], %r1",
                           "ldxdw %r1, [%r0+3]"}) {
    const Outcome r = verify_text(program(fine));
    EXPECT_TRUE(accepted(r)) << fine;
    EXPECT_TRUE(kernel_agrees(r)) << fine;
  }
  // The stack is strict for every access, atomics too.
  const Outcome stack =
      verify_text("stdw [%r10-16], 0\nmov %r1, 1\nlock add32 [%r10-10], %r1\nmov %r0, 0\nexit\n");
  EXPECT_TRUE(rejected(stack, EACCES, "misaligned stack access off"));
  EXPECT_TRUE(kernel_agrees(stack));
}

}  // namespace
}  // namespace userperf::bpf::verifier_test
