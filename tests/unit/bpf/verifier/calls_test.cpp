// bpf-to-bpf calls: argument passing, callee-saved registers, frames, stack limits.
#include "verifier_test_support.hpp"

namespace userperf::bpf::verifier_test {
namespace {

TEST(VerifierCalls, ArgumentsAndReturnValue) {
  EXPECT_TRUE(accepted(verify_text(R"(
    mov %r6, %r1
    mov %r1, 5
    call local add_one
    mov %r7, %r0
    ldxdw %r0, [%r6+168]
    add %r0, %r7
    exit
  add_one:
    mov %r0, %r1
    add %r0, 1
    exit
  )")));
}

TEST(VerifierCalls, CallerSavedAndCalleeFrames) {
  // r1-r5 are not preserved across the call.
  EXPECT_TRUE(rejected(verify_text(R"(
    mov %r2, 1
    call local f
    mov %r0, %r2
    exit
  f:
    mov %r0, 0
    exit
  )"),
                       EACCES, "R2 !read_ok"));
  // r6-r9 of the caller are not the callee's.
  EXPECT_TRUE(rejected(verify_text(R"(
    mov %r6, 1
    call local f
    exit
  f:
    mov %r0, %r6
    exit
  )"),
                       EACCES, "R6 !read_ok"));
}

TEST(VerifierCalls, CalleeMayUseCallerStackThroughPointer) {
  EXPECT_TRUE(accepted(verify_text(R"(
    stdw [%r10-8], 3
    mov %r1, %r10
    add %r1, -8
    call local read
    exit
  read:
    ldxdw %r0, [%r1+0]
    exit
  )")));
  EXPECT_TRUE(rejected(verify_text(R"(
    call local bad
    mov %r0, 0
    exit
  bad:
    mov %r0, %r10
    exit
  )"),
                       EINVAL, "cannot return stack pointer to the caller"));
}

TEST(VerifierCalls, TooManyFrames) {
  // Unbounded recursion: the ninth frame is refused.
  EXPECT_TRUE(rejected(verify_text(R"(
    call local f
    exit
  f:
    call local f
    exit
  )"),
                       E2BIG, "the call stack of 9 frames is too deep"));
}

// Frames of 64 bytes or more get private stacks on x86-64 (6.13+): 256 + 264 bytes is fine.
TEST(VerifierCalls, CombinedStackDepth) {
  const char* program = R"(
    stdw [%r10-256], 0
    call local f
    mov %r0, 0
    exit
  f:
    stdw [%r10-256], 0
    mov %r0, 0
    exit
  )";
  const Outcome ok = verify_text(program);
  ASSERT_TRUE(accepted(ok));
  EXPECT_EQ(ok.stack_depth, 512u);
  std::string deeper = program;
  deeper.replace(deeper.rfind("stdw [%r10-256]"), 15, "stdw [%r10-264]");
  const Outcome more = verify_text(deeper);
  ASSERT_TRUE(accepted(more));
  EXPECT_EQ(more.stack_depth, 528u);
}

// Each function's own depth in whole 8-byte slots (grow_stack_state), main first: the kernel's
// "stack depth 40+24+0" with BPF_LOG_STATS; the JIT's frames.
TEST(VerifierCalls, EachFunctionsOwnDepthIsReported) {
  const Outcome r = verify_text(R"(
    stdw [%r10-40], 0
    call local f
    mov %r0, 0
    exit
  f:
    stw [%r10-20], 0
    call local g
    mov %r0, 0
    exit
  g:
    mov %r0, 0
    exit
  )");
  ASSERT_TRUE(accepted(r));
  ASSERT_EQ(r.function_stacks.size(), 3u);
  EXPECT_EQ(r.function_stacks[0].start, 0u);
  EXPECT_EQ(r.function_stacks[0].depth, 40u);
  EXPECT_EQ(r.function_stacks[1].start, 4u);
  EXPECT_EQ(r.function_stacks[1].depth, 24u);  // stw [r10-20]: three slots
  EXPECT_EQ(r.function_stacks[2].start, 8u);
  EXPECT_EQ(r.function_stacks[2].depth, 0u);
  EXPECT_EQ(r.stack_depth, 48u + 32u);  // the chain, each rounded up to 16
}

}  // namespace
}  // namespace userperf::bpf::verifier_test
