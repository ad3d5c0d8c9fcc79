// struct bpf_perf_event_data access rules (pe_prog_is_valid_access).
#include "verifier_test_support.hpp"

namespace userperf::bpf::verifier_test {
namespace {

std::string load(const char* op, int off) {
  return std::string(op) + " %r0, [%r1+" + std::to_string(off) + "]\nexit\n";
}

TEST(VerifierCtx, RegsAreReadAsWholeWords) {
  EXPECT_TRUE(accepted(verify_text(load("ldxdw", 0))));
  EXPECT_TRUE(accepted(verify_text(load("ldxdw", 160))));
  EXPECT_TRUE(
      rejected(verify_text(load("ldxw", 0)), EACCES, "invalid bpf_context access off=0 size=4"));
  EXPECT_TRUE(
      rejected(verify_text(load("ldxdw", 4)), EACCES, "invalid bpf_context access off=4 size=8"));
}

TEST(VerifierCtx, SamplePeriodAndAddrAllowNarrowLoads) {
  for (int off : {168, 176}) {
    EXPECT_TRUE(accepted(verify_text(load("ldxdw", off))));
    EXPECT_TRUE(accepted(verify_text(load("ldxw", off))));
    EXPECT_TRUE(accepted(verify_text(load("ldxw", off + 4))));
    EXPECT_TRUE(accepted(verify_text(load("ldxh", off + 6))));
    EXPECT_TRUE(accepted(verify_text(load("ldxb", off + 7))));
    EXPECT_TRUE(rejected(verify_text(load("ldxw", off + 2)), EACCES, "invalid bpf_context access"));
  }
}

TEST(VerifierCtx, OutOfRangeWritesAndModifiedPointers) {
  EXPECT_TRUE(rejected(verify_text(load("ldxdw", 184)), EACCES,
                       "invalid bpf_context access off=184 size=8"));
  EXPECT_TRUE(rejected(verify_text("ldxdw %r0, [%r1-8]\nexit\n"), EACCES,
                       "invalid bpf_context access off=-8"));
  EXPECT_TRUE(rejected(verify_text("stdw [%r1+168], 0\nmov %r0, 0\nexit\n"), EACCES,
                       "invalid bpf_context access off=168 size=8"));
  EXPECT_TRUE(rejected(verify_text("mov %r2, 1\nstxdw [%r1+0], %r2\nmov %r0, 0\nexit\n"), EACCES,
                       "invalid bpf_context access off=0 size=8"));
  EXPECT_TRUE(rejected(verify_text("add %r1, 168\nldxdw %r0, [%r1+0]\nexit\n"), EACCES,
                       "dereference of modified ctx ptr R1 off=168 disallowed"));
  EXPECT_TRUE(rejected(
      verify_text("call get_prandom_u32\nand %r0, 8\nadd %r1, %r0\nldxdw %r0, [%r1+0]\nexit\n"),
      EACCES, "R1 !read_ok"));
  EXPECT_TRUE(rejected(verify_text("mov %r6, %r1\ncall get_prandom_u32\nand %r0, 8\nadd %r6, %r0\n"
                                   "ldxdw %r0, [%r6+0]\nexit\n"),
                       EACCES, "variable ctx access"));
}

TEST(VerifierCtx, SameLoadMustNotSeeCtxAndAnotherPointer) {
  EXPECT_TRUE(rejected(verify_text(R"(
    mov %r6, %r1
    stdw [%r10-8], 0
    call get_prandom_u32
    mov %r2, %r6
    jeq %r0, 0, load
    mov %r2, %r10
    add %r2, -8
  load:
    ldxdw %r0, [%r2+0]
    exit
  )"),
                       EINVAL, "same insn cannot be used with different pointers"));
}

}  // namespace
}  // namespace userperf::bpf::verifier_test
