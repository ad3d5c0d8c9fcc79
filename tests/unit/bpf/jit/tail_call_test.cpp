// bpf_tail_call on both tiers: the target replaces the running program in the same frame with the
// registers kept; 33 tail calls per run (MAX_TAIL_CALL_CNT), the 34th falls through, as do an
// index out of range and an empty slot; a tail call in a subprogram returns to its caller. Each
// case runs on the interpreter, on the JIT (targets entered by a jump), and on the JIT with
// targets only the interpreter runs (nested there, the count carried over).
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "bpf/jit/jit.hpp"
#include "unit/bpf/vm/vm_test_support.hpp"

namespace userperf::bpf {
namespace {

using testing::region_of;

enum class Tier { kInterpreter, kJit, kJitToInterpreter };

// One program on the tier under test: its interpreter always (a tail call's target has one), its
// JIT code when the tier runs it.
struct Program {
  std::unique_ptr<Interpreter> vm;
  std::unique_ptr<Jit> jit;
  bool entry_jit = false;  // run() starts on the JIT

  RunResult run(std::uint64_t r1, std::uint64_t r2, std::span<const MemoryRegion> regions) const {
    return entry_jit ? jit->run(r1, r2, regions, nullptr) : vm->run(r1, r2, regions, nullptr);
  }
};

// A fake prog array: r2 is the address of a Table, r3 the index.
struct Table {
  std::array<const Program*, 64> slots{};
  std::uint32_t max_entries = 64;
};

TailCallSlot resolve(std::uint64_t map, std::uint32_t index) {
  const auto* table = reinterpret_cast<const Table*>(static_cast<std::uintptr_t>(map));
  if (index >= table->max_entries) return {};
  const Program* target = table->slots[index];
  if (target == nullptr) return {true, nullptr, nullptr};
  return {true, target->vm.get(), target->jit.get()};
}

class TailCall : public ::testing::TestWithParam<Tier> {
 protected:
  // `text` on the tier: the interpreter, plus JIT code for the JIT tiers (for the entry only when
  // targets must run on the interpreter).
  std::unique_ptr<Program> load(const std::string& text, bool entry = true,
                                std::vector<HelperFn> helpers = {},
                                std::vector<MemoryRegion> statics = {}) {
    InterpreterOptions options;
    options.tail_call = &resolve;
    options.helpers = helpers;
    options.static_regions = statics;
    auto program = std::make_unique<Program>();
    program->vm = testing::load_asm(text, options);
    if (program->vm == nullptr) return nullptr;
    const bool jit = GetParam() == Tier::kJit || (GetParam() == Tier::kJitToInterpreter && entry);
    if (jit) {
      auto insns = assemble(text);
      EXPECT_TRUE(insns.ok());
      if (!insns.ok()) return nullptr;
      JitOptions jit_options;
      jit_options.tail_call = &resolve;
      jit_options.helpers = std::move(helpers);
      jit_options.static_regions = std::move(statics);
      auto compiled = Jit::load(*insns, std::move(jit_options));
      EXPECT_TRUE(compiled.ok()) << (compiled.ok() ? "" : compiled.error().message);
      if (!compiled.ok()) return nullptr;
      program->jit = std::move(*compiled);
      program->entry_jit = true;
    }
    return program;
  }
  std::unique_ptr<Program> load_target(const std::string& text) { return load(text, false); }
};

// r1 = memory (u64 counter at +0), r2 = table: add 1 to the counter, then tail-call slot `next`.
// Falls through (the call failed) to r0 = 1000 + counter.
std::string step_program(int next) {
  return "mov %r6, %r2\n"
         "ldxdw %r0, [%r1+0]\n"
         "add %r0, 1\n"
         "stxdw [%r1+0], %r0\n"
         "mov %r2, %r6\n"
         "mov %r3, " +
         std::to_string(next) +
         "\n"
         "call bpf_tail_call\n"
         "ldxdw %r0, [%r1+0]\n"
         "add %r0, 1000\n"
         "exit\n";
}

struct Outcome {
  RunResult result;
  std::uint64_t counter;
};

Outcome run_with(const Program& entry, Table& table) {
  std::uint64_t counter = 0;
  MemoryRegion region = region_of(&counter, sizeof(counter), true);
  RunResult result = entry.run(reinterpret_cast<std::uintptr_t>(&counter),
                               reinterpret_cast<std::uintptr_t>(&table), {&region, 1});
  return {result, counter};
}

TEST_P(TailCall, SelfTailCallRunsThirtyFourTimesThenFallsThrough) {
  Table table;
  auto self = load(step_program(0));
  ASSERT_NE(self, nullptr);
  table.slots[0] = self.get();
  Outcome run = run_with(*self, table);
  ASSERT_EQ(run.result.status, RunStatus::kOk) << to_string(run.result.status);
  // The entry run and 33 tail calls; the 34th call fails and the last program continues.
  EXPECT_EQ(run.counter, 1u + kMaxTailCalls);
  EXPECT_EQ(run.result.r0, 1000u + 1u + kMaxTailCalls);
}

TEST_P(TailCall, ChainOfThirtyThreeSucceedsTheThirtyFourthFallsThrough) {
  // Program i tail-calls slot i + 1; the chain has 40 programs, so only the count stops it.
  Table table;
  std::vector<std::unique_ptr<Program>> programs;
  for (int i = 0; i < 40; ++i) {
    programs.push_back(i == 0 ? load(step_program(i + 1)) : load_target(step_program(i + 1)));
    ASSERT_NE(programs.back(), nullptr);
    table.slots[static_cast<std::size_t>(i)] = programs.back().get();
  }
  Outcome run = run_with(*programs[0], table);
  ASSERT_EQ(run.result.status, RunStatus::kOk);
  EXPECT_EQ(run.counter, 34u);  // programs 0..33 ran: 33 tail calls
  EXPECT_EQ(run.result.r0, 1034u);
}

TEST_P(TailCall, WalksNStepsWithAStackCounter) {
  // A self-tail-calling walker as profilers' unwinders are: the state lives in memory the ctx
  // reaches (here the counter), each step decides whether to continue; 10 steps, then exit 7.
  Table table;
  auto walker = load(
      "mov %r6, %r2\n"
      "ldxdw %r0, [%r1+0]\n"
      "add %r0, 1\n"
      "stxdw [%r1+0], %r0\n"
      "jge %r0, 10, +5\n"
      "mov %r2, %r6\n"
      "mov %r3, 5\n"
      "call bpf_tail_call\n"
      "mov %r0, 99\n"  // unreachable while the slot is filled
      "exit\n"
      "mov %r0, 7\n"
      "exit\n");
  ASSERT_NE(walker, nullptr);
  table.slots[5] = walker.get();
  Outcome run = run_with(*walker, table);
  ASSERT_EQ(run.result.status, RunStatus::kOk);
  EXPECT_EQ(run.counter, 10u);
  EXPECT_EQ(run.result.r0, 7u);
}

TEST_P(TailCall, EmptySlotAndOutOfRangeContinueWithRegistersUnchanged) {
  Table table;
  table.max_entries = 4;
  auto program = load(
      "mov %r0, 42\n"
      "mov %r6, %r2\n"
      "mov %r3, 3\n"  // in range, empty
      "call bpf_tail_call\n"
      "mov %r7, %r0\n"
      "mov %r2, %r6\n"
      "mov %r3, 4\n"  // out of range
      "call bpf_tail_call\n"
      "add %r0, %r7\n"
      "exit\n");
  ASSERT_NE(program, nullptr);
  Outcome run = run_with(*program, table);
  ASSERT_EQ(run.result.status, RunStatus::kOk);
  EXPECT_EQ(run.result.r0, 84u);  // r0 is left as it was before either call
}

TEST_P(TailCall, OutOfRangeDoesNotCountEmptySlotDoes) {
  // The kernel checks the index before the count, and counts before it loads the slot.
  Table table;
  table.max_entries = 8;
  auto target = load_target("mov %r0, 5\nexit\n");
  ASSERT_NE(target, nullptr);
  table.slots[1] = target.get();
  auto caller = [&](int empty_calls, int index) {
    std::string text = "mov %r6, %r2\n";
    for (int i = 0; i < empty_calls; ++i) {
      text += "mov %r2, %r6\nmov %r3, " + std::to_string(index) + "\ncall bpf_tail_call\n";
    }
    text += "mov %r2, %r6\nmov %r3, 1\ncall bpf_tail_call\nmov %r0, 9\nexit\n";
    return load(text);
  };
  auto out_of_range = caller(40, 100);
  auto empty = caller(33, 2);
  ASSERT_NE(out_of_range, nullptr);
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(run_with(*out_of_range, table).result.r0, 5u);  // 40 uncounted, the call succeeds
  EXPECT_EQ(run_with(*empty, table).result.r0, 9u);         // 33 counted, the 34th fails
}

TEST_P(TailCall, FromASubprogramReturnsToTheCallersProgram) {
  // main calls sub, sub tail-calls the target, the target's exit returns to main (the kernel's
  // x86-64 JIT semantics of tail calls in subprograms).
  Table table;
  auto target = load_target("mov %r0, 30\nexit\n");
  ASSERT_NE(target, nullptr);
  table.slots[0] = target.get();
  auto main = load(
      "mov %r6, 12\n"
      "call local sub\n"
      "add %r0, %r6\n"
      "exit\n"
      "sub:\n"
      "mov %r6, 1000\n"
      "mov %r3, 0\n"
      "call bpf_tail_call\n"
      "mov %r0, 1\n"
      "exit\n");
  ASSERT_NE(main, nullptr);
  Outcome run = run_with(*main, table);
  ASSERT_EQ(run.result.status, RunStatus::kOk) << to_string(run.result.status);
  EXPECT_EQ(run.result.r0, 42u);  // 30 from the target, r6 = 12 restored for main
}

// Helper 1: the u64 at r1 when the run may read it (CallContext::may_access), else 0xbad.
std::uint64_t read_u64(std::uint64_t r1, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t,
                       CallContext& call) {
  if (!call.may_access(static_cast<std::uintptr_t>(r1), 8, false)) return 0xbad;
  return *reinterpret_cast<const std::uint64_t*>(static_cast<std::uintptr_t>(r1));
}

TEST_P(TailCall, HelpersSeeTheRunningProgramsStaticRegions) {
  // main's global holds 1, the target's 2, each its program's static region only. The target
  // (reached from main's subprogram) reads its own through the helper, then main, back from the
  // subprogram, reads its own: the regions a helper sees follow the running program.
  static std::uint64_t main_global = 1;
  static std::uint64_t target_global = 2;
  const auto address = [](const std::uint64_t& v) {
    return std::to_string(reinterpret_cast<std::uintptr_t>(&v));
  };
  Table table;
  auto target = load("lddw %r1, " + address(target_global) + "\ncall 1\nexit\n",
                     /*entry=*/false, {nullptr, &read_u64},
                     {region_of(&target_global, sizeof(target_global), false)});
  ASSERT_NE(target, nullptr);
  table.slots[0] = target.get();
  auto main = load(
      "call local sub\n"
      "mov %r6, %r0\n"
      "lddw %r1, " +
          address(main_global) +
          "\n"
          "call 1\n"
          "mul %r0, 10\n"
          "add %r0, %r6\n"
          "exit\n"
          "sub:\n"
          "mov %r3, 0\n"
          "call bpf_tail_call\n"
          "mov %r0, 99\n"
          "exit\n",
      true, {nullptr, &read_u64}, {region_of(&main_global, sizeof(main_global), false)});
  ASSERT_NE(main, nullptr);
  Outcome run = run_with(*main, table);
  ASSERT_EQ(run.result.status, RunStatus::kOk) << to_string(run.result.status);
  EXPECT_EQ(run.result.r0, 12u);  // 1 * 10 + 2; 0xbad in either place when the regions are wrong
}

TEST(TailCallWithoutResolver, Helper12IsAnOrdinaryHelper) {
  RunResult result = testing::run_asm("mov %r3, 0\ncall bpf_tail_call\nexit\n");
  EXPECT_EQ(result.status, RunStatus::kBadHelper);
}

std::string tier_name(const ::testing::TestParamInfo<Tier>& tier) {
  switch (tier.param) {
    case Tier::kInterpreter:
      return "Interpreter";
    case Tier::kJit:
      return "Jit";
    case Tier::kJitToInterpreter:
      return "JitToInterpreter";
  }
  return "Unknown";
}

INSTANTIATE_TEST_SUITE_P(Tiers, TailCall,
                         ::testing::Values(Tier::kInterpreter, Tier::kJit, Tier::kJitToInterpreter),
                         tier_name);

}  // namespace
}  // namespace userperf::bpf
