// The conformance runner's verdicts on small hand-written .data files.
#include "bpf/vm/conformance.hpp"

#include <gtest/gtest.h>

namespace userperf::bpf {
namespace {

TEST(ConformanceRunner, PassesComparesAndExplains) {
  ConformanceOutcome pass = run_conformance_test(
      "-- asm\nmov %r0, %r2\nexit\n-- mem\n00 11 22\n"
      "-- result\n0x3\n",
      {});
  EXPECT_EQ(pass.verdict, Verdict::kPass) << pass.detail;

  ConformanceOutcome fail = run_conformance_test("-- asm\nmov %r0, 7\nexit\n-- result\n0x8\n", {});
  EXPECT_EQ(fail.verdict, Verdict::kFail);
  EXPECT_EQ(fail.detail, "expected 0x8, got 0x7");

  // r1 points at a writable copy of the memory.
  ConformanceOutcome write = run_conformance_test(
      "-- asm\nstb [%r1+1], 0x5a\nldxb %r0, [%r1+1]\nexit\n-- mem\n00 00\n-- result\n0x5a\n", {});
  EXPECT_EQ(write.verdict, Verdict::kPass) << write.detail;
}

TEST(ConformanceRunner, SkipsByCpuVersionAndGroup) {
  const char* text = "-- asm\nlock add [%r10-8], %r1\nmov %r0, 0\nexit\n-- result\n0x0\n";
  ConformanceOutcome old_cpu = run_conformance_test(text, {CpuVersion::kV2, kAllGroups});
  EXPECT_EQ(old_cpu.verdict, Verdict::kSkip);
  EXPECT_EQ(old_cpu.detail, "needs cpu v3");
  ConformanceOutcome no_atomics =
      run_conformance_test(text, {CpuVersion::kV4, kAllGroups & ~kGroupAtomic64});
  EXPECT_EQ(no_atomics.verdict, Verdict::kSkip);
  EXPECT_EQ(no_atomics.detail, "needs group atomic64");
  EXPECT_EQ(run_conformance_test(text, {}).verdict, Verdict::kPass);
}

TEST(ConformanceRunner, UnwindHelperAndErrors) {
  // Helper 5 returns its argument; 0 ends the program with r0 = 0.
  EXPECT_EQ(
      run_conformance_test("-- asm\nmov %r1, 0\ncall 5\nmov %r0, 2\nexit\n-- result\n0x0\n", {})
          .verdict,
      Verdict::kPass);
  ConformanceOutcome fault =
      run_conformance_test("-- asm\nldxb %r0, [%r1]\nexit\n-- result\n0x0\n", {});
  EXPECT_EQ(fault.verdict, Verdict::kError);
  EXPECT_EQ(fault.detail, "memory fault at instruction 0 (address 0x0)");
  ConformanceOutcome bad_asm = run_conformance_test("# x\n-- asm\nfrob\n-- result\n0x0\n", {});
  EXPECT_EQ(bad_asm.verdict, Verdict::kError);
  EXPECT_EQ(bad_asm.detail, "does not assemble: line 3: unknown mnemonic 'frob'");
  ConformanceOutcome loop = run_conformance_test("-- asm\nl: ja l\n-- result\n0x0\n", {});
  EXPECT_EQ(loop.verdict, Verdict::kError);
  EXPECT_EQ(loop.detail, "instruction budget exhausted at instruction 0");
  // An expected error must match the runtime's text exactly.
  EXPECT_EQ(run_conformance_test("-- asm\nl: ja l\n-- error\ninstruction budget exhausted at "
                                 "instruction 0\n",
                                 {})
                .verdict,
            Verdict::kPass);
  EXPECT_EQ(run_conformance_test("-- asm\nmov %r0, 0\nexit\n-- error\nsomething\n", {}).verdict,
            Verdict::kFail);
}

}  // namespace
}  // namespace userperf::bpf
