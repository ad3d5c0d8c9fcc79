// bpf_loop on both tiers (the interpreter's op_LOOP, the JIT's native loop): the callback (an lddw
// src=BPF_PSEUDO_FUNC's function) runs in a frame of its own with (index, ctx), nr_loops times or
// until it returns non-zero; the result is the number of calls; flags != 0 is -EINVAL and nr_loops
// > 1 << 23 is -E2BIG (the kernel's bpf_loop), a callback that is no function's address stops the
// run.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "bpf/isa/assembler.hpp"
#include "bpf/jit/jit.hpp"
#include "unit/bpf/vm/vm_test_support.hpp"

namespace userperf::bpf {
namespace {

using testing::region_of;

constexpr std::size_t kCallbackLddw = 3;  // `lddw %r2, 0`
constexpr std::size_t kCallbackAt = 9;

// r1 = memory {u64 sum, u64 calls}: bpf_loop(nr_loops, callback, memory, flags) with a callback
// that adds its index to sum, counts its calls and returns 1 at index `stop`. r0 = bpf_loop's.
std::vector<Insn> loop_program(std::uint64_t nr_loops, std::int64_t flags, std::int64_t stop,
                               bool callback_is_function = true) {
  const std::string text =
      "mov %r6, %r1\n"
      "lddw %r1, " +
      std::to_string(nr_loops) +
      "\n"
      "lddw %r2, 0\n"
      "mov %r3, %r6\n"
      "mov %r4, " +
      std::to_string(flags) +
      "\n"
      "call bpf_loop\n"
      "exit\n"
      // callback, at kCallbackAt
      "ldxdw %r0, [%r2+0]\n"
      "add %r0, %r1\n"
      "stxdw [%r2+0], %r0\n"
      "ldxdw %r0, [%r2+8]\n"
      "add %r0, 1\n"
      "stxdw [%r2+8], %r0\n"
      "mov %r0, 0\n"
      "jne %r1, " +
      std::to_string(stop) +
      ", +1\n"
      "mov %r0, 1\n"
      "exit\n";
  auto insns = assemble(text);
  EXPECT_TRUE(insns.ok()) << (insns.ok() ? "" : insns.error().message);
  std::vector<Insn> out = insns.ok() ? *insns : std::vector<Insn>{};
  // The assembler has no function lddw: make `lddw %r2, 0` the callback's address.
  const std::size_t lddw = kCallbackLddw;
  EXPECT_EQ(out[lddw].code, BPF_LD | BPF_IMM | BPF_DW);
  if (callback_is_function) {
    out[lddw].src_reg = BPF_PSEUDO_FUNC;
    out[lddw].imm = static_cast<std::int32_t>(kCallbackAt - lddw - 1);
  } else {
    out[lddw].imm = static_cast<std::int32_t>(kCallbackAt);  // the right index, as a scalar
  }
  return out;
}

struct Outcome {
  RunResult result;
  std::uint64_t sum = 0;
  std::uint64_t calls = 0;
};

class BpfLoop : public ::testing::TestWithParam<bool> {  // true: the JIT
 protected:
  Outcome run(const std::vector<Insn>& insns) {
    std::uint64_t memory[2] = {0, 0};
    const MemoryRegion region = region_of(memory, sizeof(memory), true);
    const auto r1 = reinterpret_cast<std::uintptr_t>(memory);
    Outcome out;
    if (GetParam()) {
      auto jit = Jit::load(insns, {});
      EXPECT_TRUE(jit.ok()) << (jit.ok() ? "" : jit.error().message);
      if (!jit.ok()) return out;
      out.result = (*jit)->run(r1, 0, {&region, 1}, nullptr);
    } else {
      auto vm = Interpreter::load(insns, {});
      EXPECT_TRUE(vm.ok()) << (vm.ok() ? "" : vm.error().message);
      if (!vm.ok()) return out;
      out.result = (*vm)->run(r1, 0, {&region, 1}, nullptr);
    }
    out.sum = memory[0];
    out.calls = memory[1];
    return out;
  }
};

TEST_P(BpfLoop, CallsTheCallbackNrLoopsTimesWithItsIndexAndReturnsTheCount) {
  const Outcome o = run(loop_program(10, 0, -1));
  ASSERT_EQ(o.result.status, RunStatus::kOk);
  EXPECT_EQ(o.result.r0, 10u);
  EXPECT_EQ(o.calls, 10u);
  EXPECT_EQ(o.sum, 45u);  // 0 + 1 + ... + 9
}

TEST_P(BpfLoop, ANonZeroReturnStopsAfterThatCall) {
  const Outcome o = run(loop_program(100, 0, 6));
  ASSERT_EQ(o.result.status, RunStatus::kOk);
  EXPECT_EQ(o.result.r0, 7u);  // indices 0..6
  EXPECT_EQ(o.calls, 7u);
  EXPECT_EQ(o.sum, 21u);
}

TEST_P(BpfLoop, ZeroLoopsNeverCallsTheCallback) {
  const Outcome o = run(loop_program(0, 0, -1));
  ASSERT_EQ(o.result.status, RunStatus::kOk);
  EXPECT_EQ(o.result.r0, 0u);
  EXPECT_EQ(o.calls, 0u);
}

TEST_P(BpfLoop, NonZeroFlagsAreEinvalWithoutACall) {
  const Outcome o = run(loop_program(5, 1, -1));
  ASSERT_EQ(o.result.status, RunStatus::kOk);
  EXPECT_EQ(static_cast<std::int64_t>(o.result.r0), -EINVAL);
  EXPECT_EQ(o.calls, 0u);
}

TEST_P(BpfLoop, MoreThanTwoToThe23LoopsAreE2bigWithoutACall) {
  const Outcome o = run(loop_program((1U << 23) + 1, 0, -1));
  ASSERT_EQ(o.result.status, RunStatus::kOk);
  EXPECT_EQ(static_cast<std::int64_t>(o.result.r0), -E2BIG);
  EXPECT_EQ(o.calls, 0u);
}

TEST_P(BpfLoop, NrLoopsIsAU32) {
  const Outcome o = run(loop_program((1ULL << 32) + 3, 0, -1));
  ASSERT_EQ(o.result.status, RunStatus::kOk);
  EXPECT_EQ(o.result.r0, 3u);
  EXPECT_EQ(o.calls, 3u);
}

TEST_P(BpfLoop, TheLargestCountRunsToTheEnd) {
  const Outcome o = run(loop_program(1U << 23, 0, -1));
  ASSERT_EQ(o.result.status, RunStatus::kOk);
  EXPECT_EQ(o.result.r0, 1u << 23);
  EXPECT_EQ(o.calls, 1u << 23);
}

TEST_P(BpfLoop, ACallbackThatIsNoFunctionAddressStopsTheRun) {
  const Outcome o = run(loop_program(3, 0, -1, false));
  EXPECT_EQ(o.result.status, RunStatus::kBadHelper);
  EXPECT_EQ(o.calls, 0u);
}

TEST_P(BpfLoop, TheCallersRegistersSixToNineSurviveEveryCall) {
  // The callback overwrites r6..r9; the caller's are back after the loop.
  auto insns = assemble(
      "mov %r6, 1\nmov %r7, 2\nmov %r8, 3\nmov %r9, 4\n"
      "mov %r1, 3\n"
      "lddw %r2, 0\n"
      "mov %r3, 0\nmov %r4, 0\n"
      "call bpf_loop\n"
      "add %r0, %r6\nadd %r0, %r7\nadd %r0, %r8\nadd %r0, %r9\n"
      "exit\n"
      "mov %r6, 100\nmov %r7, 100\nmov %r8, 100\nmov %r9, 100\nmov %r0, 0\nexit\n");
  ASSERT_TRUE(insns.ok());
  std::vector<Insn> program = *insns;
  constexpr std::size_t kLddw = 5;
  constexpr std::size_t kCallback = 15;
  ASSERT_EQ(program[kLddw].code, BPF_LD | BPF_IMM | BPF_DW);
  program[kLddw].src_reg = BPF_PSEUDO_FUNC;
  program[kLddw].imm = static_cast<std::int32_t>(kCallback - kLddw - 1);
  const Outcome o = run(program);
  ASSERT_EQ(o.result.status, RunStatus::kOk) << to_string(o.result.status);
  EXPECT_EQ(o.result.r0, 3u + 1 + 2 + 3 + 4);
}

INSTANTIATE_TEST_SUITE_P(Tiers, BpfLoop, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& tier) {
                           return tier.param ? "Jit" : "Interpreter";
                         });

}  // namespace
}  // namespace userperf::bpf
