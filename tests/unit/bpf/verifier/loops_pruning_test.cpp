// Bounded loops, infinite loops, the complexity limit, state pruning, JMP32 and linked scalars.
#include <chrono>

#include "verifier_test_support.hpp"

namespace userperf::bpf::verifier_test {
namespace {

TEST(VerifierLoops, BoundedLoopIsAccepted) {
  const VerifyResult r = verify_text(R"(
    mov %r0, 0
    mov %r2, 0
  loop:
    add %r0, %r2
    add %r2, 1
    jlt %r2, 10, loop
    exit
  )");
  EXPECT_TRUE(accepted(r));
  EXPECT_GT(r.processed_insns, 30u);  // every iteration walked
}

TEST(VerifierLoops, InfiniteLoopIsDetected) {
  EXPECT_TRUE(rejected(verify_text("mov %r0, 0\nloop:\njeq %r0, 0, loop\nexit\n"), EINVAL,
                       "infinite loop detected"));
  // A loop with no exit whose state changes: only the complexity limit stops it.
  const VerifyResult r = verify_text(R"(
    mov %r0, 0
  loop:
    add %r0, 1
    jne %r0, 0, loop
    exit
  )");
  EXPECT_TRUE(rejected(r, E2BIG, "BPF program is too large. Processed 1000001 insn"));
  EXPECT_EQ(r.processed_insns, 1000001u);
}

TEST(VerifierLoops, UnboundedLoopOnUnknownValueIsRejected) {
  EXPECT_TRUE(rejected(verify_text(R"(
    call get_prandom_u32
    mov %r2, 0
  loop:
    add %r2, 1
    jlt %r2, %r0, loop
    mov %r0, 0
    exit
  )"),
                       E2BIG, "BPF program is too large"));
}

// 30 diamonds that each set a dead register differently: 2^30 paths, few processed insns.
std::string diamonds(int count) {
  std::string text = "mov %r6, %r1\ncall get_prandom_u32\nmov %r7, %r0\n";
  for (int i = 0; i < count; ++i) {
    const std::string l = "d" + std::to_string(i);
    text += "jset %r7, " + std::to_string(1 << (i % 30)) + ", " + l + "\n";
    text += "mov %r3, 1\n";
    text += l + ":\n";
    text += "mov %r3, 2\n";
  }
  text += "ldxdw %r0, [%r6+168]\nexit\n";
  return text;
}

TEST(VerifierPruning, DiamondsArePruned) {
  const VerifyResult r = verify_text(diamonds(30));
  ASSERT_TRUE(accepted(r));
  EXPECT_LT(r.processed_insns, 500u);
  EXPECT_GT(r.peak_states, 0u);
}

TEST(VerifierJumps, Jmp32RefinesTheLowHalf) {
  const char* program = R"(
    stw [%r10-4], 0
    mov %r2, %r10
    add %r2, -4
    lddw %r1, map:array
    call map_lookup_elem
    jeq %r0, 0, out
    mov %r6, %r0
    call get_prandom_u32
    mov32 %r0, %r0
    jgt32 %r0, 12, out
    add %r6, %r0
    ldxw %r0, [%r6+0]
    exit
  out:
    mov %r0, 0
    exit
  )";
  EXPECT_TRUE(accepted(verify_text(program)));
  std::string bad = program;
  bad.replace(bad.find("jgt32 %r0, 12"), 13, "jgt32 %r0, 13");
  EXPECT_TRUE(
      rejected(verify_text(bad), EACCES, "max value is outside of the allowed memory range"));
}

TEST(VerifierJumps, SignedChecksAndLinkedCopies) {
  // The bound is checked on a copy (r2) and used on the original (r0): they share an id.
  const char* program = R"(
    stw [%r10-4], 0
    mov %r2, %r10
    add %r2, -4
    lddw %r1, map:array
    call map_lookup_elem
    jeq %r0, 0, out
    mov %r6, %r0
    call get_prandom_u32
    mov %r2, %r0
    jsgt %r2, 8, out
    jslt %r2, 0, out
    add %r6, %r0
    ldxdw %r0, [%r6+0]
    exit
  out:
    mov %r0, 0
    exit
  )";
  EXPECT_TRUE(accepted(verify_text(program)));
  std::string no_lower = program;
  no_lower.replace(no_lower.find("jslt %r2, 0, out"), 16, "jslt %r2, -4, out");
  EXPECT_TRUE(rejected(verify_text(no_lower), EACCES, "R6 min value is negative"));
  std::string unbounded = program;
  unbounded.erase(unbounded.find("jslt %r2, 0, out"), 16);
  EXPECT_TRUE(rejected(verify_text(unbounded), EINVAL, "unbounded min value is not allowed"));
}

TEST(VerifierPerformance, TypicalFilterVerifiesQuickly) {
  // Not a timing assertion (benchmarks measure); a sanity check that the walk stays small.
  const VerifyResult r = verify_text(diamonds(8));
  ASSERT_TRUE(accepted(r));
  EXPECT_LT(r.processed_insns, 200u);
}

}  // namespace
}  // namespace userperf::bpf::verifier_test
