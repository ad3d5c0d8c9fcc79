// Ringbuf records and reference tracking: reserve's constant size, the NULL check, bounded record
// memory, release by submit/discard on every path, copies invalidated by the release. Each case
// is also loaded into the running kernel, which must give the same verdict and errno.
#include <gtest/gtest.h>

#include <string>

#include "verifier_test_support.hpp"

namespace userperf::bpf::verifier_test {
namespace {

constexpr const char* kReserve16 =
    "lddw %r1, map:ring\nmov %r2, 16\nmov %r3, 0\ncall ringbuf_reserve\n";

std::string with_record(const std::string& body) {
  return std::string(kReserve16) + "jeq %r0, 0, out\n" + body + "out:\nmov %r0, 0\nexit\n";
}

constexpr const char* kSubmitR0 = "mov %r1, %r0\nmov %r2, 0\ncall ringbuf_submit\n";

TEST(VerifierRingbuf, ReserveFillSubmitAndDiscard) {
  EXPECT_TRUE(accepted(
      verify_text(with_record("stdw [%r0+8], 1\nstb [%r0+15], 2\n" + std::string(kSubmitR0)))));
  EXPECT_TRUE(
      accepted(verify_text(with_record("mov %r1, %r0\nmov %r2, 1\ncall ringbuf_discard\n"))));
  EXPECT_TRUE(accepted(verify_text("lddw %r1, map:ring\nmov %r2, 2\ncall ringbuf_query\nexit\n")));
}

TEST(VerifierRingbuf, EveryPathMustRelease) {
  const Outcome leak = verify_text(std::string(kReserve16) + "mov %r0, 0\nexit\n");
  EXPECT_TRUE(rejected(leak, EINVAL, "Unreleased reference id=2 alloc_insn=4"));
  // Only the NULL path leaves without releasing: it holds nothing.
  EXPECT_TRUE(accepted(verify_text(with_record(kSubmitR0))));
  EXPECT_TRUE(rejected(verify_text(with_record("mov %r6, %r0\ncall get_prandom_u32\n"
                                               "jeq %r0, 7, out\nmov %r1, %r6\nmov %r2, 0\n"
                                               "call ringbuf_submit\n")),
                       EINVAL, "Unreleased reference"));
}

TEST(VerifierRingbuf, ReleaseInvalidatesEveryCopy) {
  EXPECT_TRUE(rejected(verify_text(with_record("mov %r6, %r0\n" + std::string(kSubmitR0) +
                                               "mov %r1, %r6\nmov %r2, 0\ncall ringbuf_submit\n")),
                       EACCES, "R1 type=scalar expected=ringbuf_mem"));
  EXPECT_TRUE(rejected(verify_text(with_record("stxdw [%r10-8], %r0\n" + std::string(kSubmitR0) +
                                               "ldxdw %r1, [%r10-8]\nstdw [%r1+0], 1\n")),
                       EACCES, "R1 invalid mem access 'scalar'"));
}

TEST(VerifierRingbuf, ArgumentsAreChecked) {
  EXPECT_TRUE(rejected(verify_text("call get_prandom_u32\nand %r0, 15\nmov %r2, %r0\n"
                                   "lddw %r1, map:ring\nmov %r3, 0\ncall ringbuf_reserve\n"
                                   "jeq %r0, 0, out\n" +
                                   std::string(kSubmitR0) + "out:\nmov %r0, 0\nexit\n"),
                       EACCES, "R2 is not a known constant'"));
  EXPECT_TRUE(rejected(verify_text(std::string(kReserve16) + kSubmitR0 + "mov %r0, 0\nexit\n"),
                       EACCES, "R1 type=ringbuf_mem_or_null expected=ringbuf_mem"));
  EXPECT_TRUE(rejected(verify_text(with_record("add %r0, 8\n" + std::string(kSubmitR0))), EINVAL,
                       "R1 must have zero offset when passed to release func"));
  EXPECT_TRUE(rejected(
      verify_text("lddw %r1, map:array\nmov %r2, 8\nmov %r3, 0\ncall ringbuf_reserve\nexit\n"),
      EINVAL, "cannot pass map_type 2 into func bpf_ringbuf_reserve#131"));
  EXPECT_TRUE(rejected(
      verify_text("lddw %r1, map:ring\nmov %r2, %r10\nadd %r2, -8\ncall map_lookup_elem\nexit\n"),
      EACCES, "invalid zero-sized read"));  // the kernel checks the key (size 0) first
}

TEST(VerifierRingbuf, RecordMemoryIsBoundedByItsSize) {
  EXPECT_TRUE(rejected(verify_text(with_record("stdw [%r0+12], 1\n" + std::string(kSubmitR0))),
                       EACCES, "invalid access to memory, mem_size=16 off=12 size=8"));
  EXPECT_TRUE(rejected(verify_text(with_record("mov %r6, %r0\nmov %r1, %r0\nmov %r2, 17\n"
                                               "call get_current_comm\nmov %r0, %r6\n" +
                                               std::string(kSubmitR0))),
                       EACCES, "invalid access to memory, mem_size=16 off=0 size=17"));
  // A variable offset, bounded: accepted; unbounded: rejected.
  EXPECT_TRUE(accepted(verify_text(
      with_record("mov %r6, %r0\ncall get_prandom_u32\nand %r0, 7\nmov %r1, %r6\nadd %r1, %r0\n"
                  "stdw [%r1+0], 1\nmov %r0, %r6\n" +
                  std::string(kSubmitR0)))));
  EXPECT_TRUE(rejected(
      verify_text(with_record("mov %r6, %r0\ncall get_prandom_u32\nand %r0, 15\nmov %r1, %r6\n"
                              "add %r1, %r0\nstdw [%r1+0], 1\nmov %r0, %r6\n" +
                              std::string(kSubmitR0))),
      EACCES, "invalid access to memory, mem_size=16"));
}

TEST(VerifierRingbuf, TailCallWhileHoldingAReference) {
  EXPECT_TRUE(rejected(verify_text("mov %r6, %r1\n" + std::string(kReserve16) +
                                   "jeq %r0, 0, out\nmov %r7, %r0\nmov %r1, %r6\n"
                                   "lddw %r2, map:progs\nmov %r3, 0\ncall tail_call\n"
                                   "mov %r1, %r7\nmov %r2, 0\ncall ringbuf_submit\n"
                                   "out:\nmov %r0, 0\nexit\n"),
                       EINVAL, "tail_call would lead to reference leak"));
}

}  // namespace
}  // namespace userperf::bpf::verifier_test
