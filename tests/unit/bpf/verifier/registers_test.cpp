// Register rules: initialization, r10, ALU checks, pointer arithmetic (privileged rules).
#include "bpf/verifier/tnum.hpp"
#include "verifier_test_support.hpp"

namespace userperf::bpf::verifier_test {
namespace {

TEST(VerifierRegisters, UninitializedReads) {
  EXPECT_TRUE(rejected(verify_text("exit\n"), EACCES, "R0 !read_ok"));
  EXPECT_TRUE(rejected(verify_text("mov %r0, %r2\nexit\n"), EACCES, "R2 !read_ok"));
  EXPECT_TRUE(rejected(verify_text("add %r3, 1\nmov %r0, 0\nexit\n"), EACCES, "R3 !read_ok"));
  EXPECT_TRUE(accepted(verify_text("mov %r0, %r1\nexit\n")));  // r1 = ctx; privileged may return it
}

TEST(VerifierRegisters, FramePointerIsReadOnly) {
  EXPECT_TRUE(rejected(verify_text("mov %r10, 0\nmov %r0, 0\nexit\n"), EACCES,
                       "frame pointer is read only"));
  EXPECT_TRUE(rejected(verify_text("add %r10, -8\nmov %r0, 0\nexit\n"), EACCES,
                       "frame pointer is read only"));
  EXPECT_TRUE(accepted(verify_text("mov %r2, %r10\nadd %r2, -8\nmov %r0, 0\nexit\n")));
}

TEST(VerifierRegisters, DivisionAndShiftImmediates) {
  EXPECT_TRUE(rejected(verify_text("mov %r0, 1\ndiv %r0, 0\nexit\n"), EINVAL, "div by zero"));
  EXPECT_TRUE(rejected(verify_text("mov %r0, 1\nmod32 %r0, 0\nexit\n"), EINVAL, "div by zero"));
  EXPECT_TRUE(rejected(verify_text("mov %r0, 1\nlsh %r0, 64\nexit\n"), EINVAL, "invalid shift 64"));
  EXPECT_TRUE(
      rejected(verify_text("mov %r0, 1\nlsh32 %r0, 32\nexit\n"), EINVAL, "invalid shift 32"));
  EXPECT_TRUE(accepted(
      verify_text("mov %r0, 1\nlsh %r0, 63\ndiv %r0, 3\nmov %r2, 0\ndiv %r0, %r2\nexit\n")));
}

TEST(VerifierRegisters, PointerArithmeticPerType) {
  // Stack and ctx pointers accept constant and (privileged) variable offsets.
  EXPECT_TRUE(accepted(verify_text("mov %r2, %r1\nadd %r2, 8\nmov %r0, 0\nexit\n")));
  // Subtracting from the frame pointer is refused; adding a negative constant is the idiom.
  EXPECT_TRUE(rejected(verify_text("mov %r2, %r10\nsub %r2, 8\nmov %r0, 0\nexit\n"), EACCES,
                       "R2 subtraction from stack pointer prohibited"));
  EXPECT_TRUE(rejected(verify_text("mov %r2, %r10\nand %r2, 8\nmov %r0, 0\nexit\n"), EACCES,
                       "R2 bitwise operator &= on pointer prohibited"));
  EXPECT_TRUE(rejected(verify_text("mov %r2, %r10\nmul %r2, 8\nmov %r0, 0\nexit\n"), EACCES,
                       "R2 pointer arithmetic with *= operator prohibited"));
  EXPECT_TRUE(rejected(verify_text("mov %r2, %r10\nadd32 %r2, 8\nmov %r0, 0\nexit\n"), EACCES,
                       "R2 32-bit pointer arithmetic prohibited"));
  EXPECT_TRUE(rejected(verify_text("mov %r2, 1\nsub %r2, %r10\nmov %r0, 0\nexit\n"), EACCES,
                       "R2 tried to subtract pointer from scalar"));
  EXPECT_TRUE(rejected(verify_text("lddw %r1, map:hash\nadd %r1, 8\nmov %r0, 0\nexit\n"), EACCES,
                       "R1 pointer arithmetic on map_ptr prohibited"));
  EXPECT_TRUE(rejected(verify_text("mov %r2, %r10\nadd %r2, %r1\nmov %r0, 0\nexit\n"), EACCES,
                       "pointer += pointer prohibited"));
  // Privileged: pointer - pointer is a scalar, and a pointer may be copied into a 32-bit reg.
  EXPECT_TRUE(accepted(verify_text("mov %r2, %r10\nsub %r2, %r1\nmov32 %r0, %r2\nexit\n")));
  // An unbounded scalar added to a pointer.
  EXPECT_TRUE(
      rejected(verify_text("call get_prandom_u32\nlsh %r0, 32\nmov %r2, %r10\nadd %r2, %r0\n"
                           "mov %r0, 0\nexit\n"),
               EINVAL, "unbounded min value is not allowed"));
  EXPECT_TRUE(
      rejected(verify_text("mov %r2, %r10\nlddw %r3, 0x40000000\nadd %r2, %r3\nmov %r0, 0\nexit\n"),
               EINVAL, "is not allowed"));
}

TEST(VerifierRegisters, ScalarBoundsThroughAlu) {
  // (x & 0xf) * 2 + 1 <= 31: a 32-byte map value read at that offset is safe.
  const char* program = R"(
    mov %r6, %r1
    stw [%r10-4], 0
    mov %r2, %r10
    add %r2, -4
    lddw %r1, map:.bss
    call map_lookup_elem
    jeq %r0, 0, out
    mov %r7, %r0
    call get_prandom_u32
    and %r0, 7
    add %r0, 8
    add %r7, %r0
    ldxb %r0, [%r7+0]
    exit
  out:
    mov %r0, 0
    exit
  )";
  EXPECT_TRUE(accepted(verify_text(program)));
  std::string too_far = program;
  too_far.replace(too_far.find("add %r0, 8"), 10, "add %r0, 9");
  EXPECT_TRUE(rejected(verify_text(too_far), EACCES,
                       "invalid access to map value, value_size=16 off=16 size=1"));
}

// A JSET's false branch keeps only the narrowed tnum: the kernel forgets the ranges first (6.17+),
// so s32 [-63, 0] and a low byte of (0; 0xf8) give [0, 248], not 0. Found by the soundness campaign
// (fuzz/soundness, seed 3), where userperf accepted what the kernel rejects; corpus 455 and 456.
TEST(VerifierRegisters, JsetFalseBranchForgetsTheRanges) {
  auto program = [](int from) {
    return "ldxdw %r8, [%r1+0]\nand %r8, 63\nneg32 %r8\njset32 %r8, -249, +4\nmov %r7, %r10\n"
           "add %r7, " +
           std::to_string(from) + "\nadd %r7, %r8\nstdw [%r7], 0\nmov %r0, 0\nexit\n";
  };
  EXPECT_TRUE(
      rejected(verify_text(program(-8)), EINVAL, "invalid variable-offset write to stack R7"));
  EXPECT_TRUE(accepted(verify_text(program(-256))));
}

// BPF_END of a scalar as the kernel's scalar_byte_swap (6.18): le64 keeps the bounds, a swap swaps
// the tnum's bytes. Each program adds the result to fp-256 and stores there. Corpus 457-460.
TEST(VerifierRegisters, ByteSwapsKeepOrSwapTheBounds) {
  auto program = [](const char* setup) {
    return std::string("ldxdw %r8, [%r1+0]\n") + setup +
           "mov %r7, %r10\nadd %r7, -256\nadd %r7, %r8\nstdw [%r7], 0\nmov %r0, 0\nexit\n";
  };
  EXPECT_TRUE(accepted(verify_text(program("and %r8, 248\nle64 %r8\n"))));
  EXPECT_TRUE(accepted(verify_text(program("and %r8, 63488\nbe16 %r8\n"))));
  EXPECT_TRUE(accepted(verify_text(program("and %r8, 248\nlsh %r8, 56\nbswap64 %r8\n"))));
  EXPECT_TRUE(rejected(verify_text(program("and %r8, 248\nbe32 %r8\n")), EACCES,
                       "invalid unbounded variable-offset write to stack R7"));
}

// The kernel's tnum multiplication (6.18): (0x2d400; 0x1ff) * 111128 leaves every bit of the low
// word above bit 2 unknown, so the JSET falls through with the low byte (0; 0xf8) and fp + r8 is
// out of the stack; the older algorithm knew 0xc8000000 and took the JSET always. Corpus 461 and
// 462.
TEST(VerifierRegisters, Mul32TnumIsTheKernels) {
  auto program = [](const char* base) {
    return std::string(
               "ldxdw %r8, [%r1+0]\nand %r8, 511\nor %r8, 185344\nmul32 %r8, 111128\n"
               "jset32 %r8, -249, +4\nmov %r7, %r10\n") +
           base + "add %r7, %r8\nstdw [%r7], 0\nmov %r0, 0\nexit\n";
  };
  EXPECT_TRUE(rejected(verify_text(program("add %r7, 0\n")), EACCES,
                       "invalid variable-offset write to stack R7"));
  EXPECT_TRUE(accepted(verify_text(program("add %r7, -256\n"))));
  const Tnum product = tnum_mul(Tnum{0x2d400, 0x1ff}, Tnum::constant(111128));
  EXPECT_EQ(product.subreg(), (Tnum{0, 0xfffffff8}));
}

}  // namespace
}  // namespace userperf::bpf::verifier_test
