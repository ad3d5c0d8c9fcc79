// bpf_tail_call in the interpreter: the target replaces the running program in the same frame
// with the registers kept; 33 tail calls per run (MAX_TAIL_CALL_CNT), the 34th falls through, as do
// an index out of range and an empty slot; a tail call in a subprogram returns to its caller.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "unit/bpf/vm/vm_test_support.hpp"

namespace userperf::bpf {
namespace {

using testing::load_asm;
using testing::region_of;

// A fake prog array: r2 is the address of a Table, r3 the index.
struct Table {
  std::array<const Interpreter*, 64> slots{};
  std::uint32_t max_entries = 64;
};

TailCallSlot resolve(std::uint64_t map, std::uint32_t index) {
  const auto* table = reinterpret_cast<const Table*>(static_cast<std::uintptr_t>(map));
  if (index >= table->max_entries) return {};
  return {true, table->slots[index]};
}

InterpreterOptions with_tail_calls() {
  InterpreterOptions options;
  options.tail_call = &resolve;
  return options;
}

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

Outcome run_with(const Interpreter& entry, Table& table) {
  std::uint64_t counter = 0;
  MemoryRegion region = region_of(&counter, sizeof(counter), true);
  RunResult result = entry.run(reinterpret_cast<std::uintptr_t>(&counter),
                               reinterpret_cast<std::uintptr_t>(&table), {&region, 1}, nullptr);
  return {result, counter};
}

TEST(TailCall, SelfTailCallRunsThirtyFourTimesThenFallsThrough) {
  Table table;
  auto self = load_asm(step_program(0), with_tail_calls());
  ASSERT_NE(self, nullptr);
  table.slots[0] = self.get();
  Outcome run = run_with(*self, table);
  ASSERT_EQ(run.result.status, RunStatus::kOk) << to_string(run.result.status);
  // The entry run and 33 tail calls; the 34th call fails and the last program continues.
  EXPECT_EQ(run.counter, 1u + kMaxTailCalls);
  EXPECT_EQ(run.result.r0, 1000u + 1u + kMaxTailCalls);
}

TEST(TailCall, ChainOfThirtyThreeSucceedsTheThirtyFourthFallsThrough) {
  // Program i tail-calls slot i + 1; the chain has 40 programs, so only the count stops it.
  Table table;
  std::vector<std::unique_ptr<Interpreter>> programs;
  for (int i = 0; i < 40; ++i) {
    programs.push_back(load_asm(step_program(i + 1), with_tail_calls()));
    ASSERT_NE(programs.back(), nullptr);
    table.slots[static_cast<std::size_t>(i)] = programs.back().get();
  }
  Outcome run = run_with(*programs[0], table);
  ASSERT_EQ(run.result.status, RunStatus::kOk);
  EXPECT_EQ(run.counter, 34u);  // programs 0..33 ran: 33 tail calls
  EXPECT_EQ(run.result.r0, 1034u);
}

TEST(TailCall, WalksNStepsWithAStackCounter) {
  // A self-tail-calling walker as profilers' unwinders are: the state lives in memory the ctx
  // reaches (here the counter), each step decides whether to continue; 10 steps, then exit 7.
  Table table;
  auto walker = load_asm(
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
      "exit\n",
      with_tail_calls());
  ASSERT_NE(walker, nullptr);
  table.slots[5] = walker.get();
  Outcome run = run_with(*walker, table);
  ASSERT_EQ(run.result.status, RunStatus::kOk);
  EXPECT_EQ(run.counter, 10u);
  EXPECT_EQ(run.result.r0, 7u);
}

TEST(TailCall, EmptySlotAndOutOfRangeContinueWithRegistersUnchanged) {
  Table table;
  table.max_entries = 4;
  auto program = load_asm(
      "mov %r0, 42\n"
      "mov %r6, %r2\n"
      "mov %r3, 3\n"  // in range, empty
      "call bpf_tail_call\n"
      "mov %r7, %r0\n"
      "mov %r2, %r6\n"
      "mov %r3, 4\n"  // out of range
      "call bpf_tail_call\n"
      "add %r0, %r7\n"
      "exit\n",
      with_tail_calls());
  ASSERT_NE(program, nullptr);
  Outcome run = run_with(*program, table);
  ASSERT_EQ(run.result.status, RunStatus::kOk);
  EXPECT_EQ(run.result.r0, 84u);  // r0 is left as it was before either call
}

TEST(TailCall, OutOfRangeDoesNotCountEmptySlotDoes) {
  // The kernel checks the index before the count, and counts before it loads the slot.
  Table table;
  table.max_entries = 8;
  auto target = load_asm("mov %r0, 5\nexit\n", with_tail_calls());
  ASSERT_NE(target, nullptr);
  table.slots[1] = target.get();
  auto caller = [&](int empty_calls, int index) {
    std::string text = "mov %r6, %r2\n";
    for (int i = 0; i < empty_calls; ++i) {
      text += "mov %r2, %r6\nmov %r3, " + std::to_string(index) + "\ncall bpf_tail_call\n";
    }
    text += "mov %r2, %r6\nmov %r3, 1\ncall bpf_tail_call\nmov %r0, 9\nexit\n";
    return load_asm(text, with_tail_calls());
  };
  auto out_of_range = caller(40, 100);
  auto empty = caller(33, 2);
  ASSERT_NE(out_of_range, nullptr);
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(run_with(*out_of_range, table).result.r0, 5u);  // 40 uncounted, the call succeeds
  EXPECT_EQ(run_with(*empty, table).result.r0, 9u);         // 33 counted, the 34th fails
}

TEST(TailCall, FromASubprogramReturnsToTheCallersProgram) {
  // main calls sub, sub tail-calls the target, the target's exit returns to main (the kernel's
  // x86-64 JIT semantics of tail calls in subprograms).
  Table table;
  auto target = load_asm("mov %r0, 30\nexit\n", with_tail_calls());
  ASSERT_NE(target, nullptr);
  table.slots[0] = target.get();
  auto main = load_asm(
      "mov %r6, 12\n"
      "call local sub\n"
      "add %r0, %r6\n"
      "exit\n"
      "sub:\n"
      "mov %r6, 1000\n"
      "mov %r3, 0\n"
      "call bpf_tail_call\n"
      "mov %r0, 1\n"
      "exit\n",
      with_tail_calls());
  ASSERT_NE(main, nullptr);
  Outcome run = run_with(*main, table);
  ASSERT_EQ(run.result.status, RunStatus::kOk) << to_string(run.result.status);
  EXPECT_EQ(run.result.r0, 42u);  // 30 from the target, r6 = 12 restored for main
}

TEST(TailCall, WithoutAResolverHelper12IsAnOrdinaryHelper) {
  RunResult result = testing::run_asm("mov %r3, 0\ncall bpf_tail_call\nexit\n");
  EXPECT_EQ(result.status, RunStatus::kBadHelper);
}

}  // namespace
}  // namespace userperf::bpf
