// The JIT's frames of the verifier's sizes (frames.hpp): a function whose verified depth is 40
// gets 40 bytes (the stack region a helper sees, the stack a run reserves), a local call lowers
// r10 by the caller's frame only, a chain of eight frames at the kernel's 512-byte limit runs
// without frames overlapping, also in a signal handler on a 16 KB sigaltstack; programs nobody
// verified and programs that tail-call keep kMaxStack frames; checked code's stack is the real
// frame.
#include <gtest/gtest.h>

#include <signal.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "bpf/isa/assembler.hpp"
#include "bpf/jit/jit.hpp"

namespace userperf::bpf {
namespace {

constexpr int kRecordHelper = 1;

// The active stack region (CallContext::regions[0]) the last helper call saw, and its r10.
MemoryRegion seen_stack{};
std::uint64_t seen_r1 = 0;

std::uint64_t record_stack(std::uint64_t r1, std::uint64_t, std::uint64_t, std::uint64_t,
                           std::uint64_t, CallContext& call) {
  seen_stack = call.regions[0];
  seen_r1 = r1;
  return 0;
}

std::unique_ptr<Jit> load(const std::string& text, std::vector<FunctionStack> stacks,
                          bool checked = false) {
  auto insns = assemble(text);
  EXPECT_TRUE(insns.ok()) << (insns.ok() ? "" : insns.error().message);
  if (!insns.ok()) return nullptr;
  JitOptions options;
  options.helpers.resize(kRecordHelper + 1);
  options.helpers[kRecordHelper] = &record_stack;
  options.function_stacks = std::move(stacks);
  options.checked = checked;
  auto jit = Jit::load(*insns, std::move(options));
  EXPECT_TRUE(jit.ok()) << (jit.ok() ? "" : jit.error().message);
  return jit.ok() ? std::move(*jit) : nullptr;
}

// Main (depth 40) stores 7 at r10-40, passes r10 to the helper, then calls sub (depth 24), which
// passes its r10 to the helper too.
const char* kTwoFunctions =
    "stdw [%r10-40], 7\n"
    "mov %r1, %r10\n"
    "call 1\n"
    "call local sub\n"
    "ldxdw %r0, [%r10-40]\n"
    "exit\n"
    "sub:\n"
    "stdw [%r10-24], 9\n"
    "mov %r1, %r10\n"
    "call 1\n"
    "mov %r0, 0\n"
    "exit\n";
constexpr std::uint32_t kSubStart = 6;

TEST(JitFrames, AFunctionOfVerifiedDepth40GetsA40ByteFrame) {
  auto jit = load(kTwoFunctions, {{0, 40}, {kSubStart, 24}});
  ASSERT_NE(jit, nullptr);
  EXPECT_EQ(jit->stack_reserve(), 64u);  // 40 + 24, a multiple of 16
  seen_stack = {};
  const RunResult result = jit->run(0, 0, {}, nullptr);
  ASSERT_EQ(result.status, RunStatus::kOk) << to_string(result.status);
  EXPECT_EQ(result.r0, 7u);
  // In sub: its frame is 24 bytes below main's 40; the region spans both.
  EXPECT_EQ(seen_stack.end - seen_stack.begin, 64u);
  EXPECT_EQ(seen_r1 - seen_stack.begin, 24u);
  EXPECT_EQ(seen_stack.end - seen_r1, 40u);  // the call lowered r10 by main's frame only
}

TEST(JitFrames, UnverifiedProgramsKeepKMaxStackFrames) {
  auto jit = load(kTwoFunctions, {});
  ASSERT_NE(jit, nullptr);
  EXPECT_EQ(jit->stack_reserve(), static_cast<std::uint32_t>(kMaxCallFrames * kMaxStack));
  ASSERT_EQ(jit->run(0, 0, {}, nullptr).status, RunStatus::kOk);
  EXPECT_EQ(seen_r1 - seen_stack.begin, static_cast<std::uint64_t>(kMaxStack));
  EXPECT_EQ(seen_stack.end - seen_r1, static_cast<std::uint64_t>(kMaxStack));
}

TEST(JitFrames, ProgramsThatTailCallKeepKMaxStackFrames) {
  const std::string text =
      "mov %r1, %r10\n"
      "call 1\n"
      "mov %r0, 0\n"
      "exit\n"
      "mov %r1, 0\n"  // never reached: makes the program one that tail-calls
      "call 12\n"
      "exit\n";
  auto insns = assemble(text);
  ASSERT_TRUE(insns.ok());
  JitOptions options;
  options.helpers.resize(kRecordHelper + 1);
  options.helpers[kRecordHelper] = &record_stack;
  options.tail_call = [](std::uint64_t, std::uint32_t) { return TailCallSlot{}; };
  options.function_stacks = {{0, 8}};
  auto jit = Jit::load(*insns, std::move(options));
  ASSERT_TRUE(jit.ok()) << jit.error().message;
  EXPECT_EQ((*jit)->stack_reserve(), static_cast<std::uint32_t>(kMaxCallFrames * kMaxStack));
  ASSERT_EQ((*jit)->run(0, 0, {}, nullptr).status, RunStatus::kOk);
  EXPECT_EQ(seen_stack.end - seen_stack.begin, static_cast<std::uint64_t>(kMaxStack));
}

TEST(JitFrames, DepthsThatDoNotDescribeTheFunctionsAreRefused) {
  auto insns = assemble(kTwoFunctions);
  ASSERT_TRUE(insns.ok());
  JitOptions options;
  options.helpers.resize(kRecordHelper + 1);
  options.helpers[kRecordHelper] = &record_stack;
  options.function_stacks = {{0, 40}};  // sub has none
  auto jit = Jit::load(*insns, options);
  ASSERT_FALSE(jit.ok());
  EXPECT_EQ(jit.error().code, EINVAL);
  options.function_stacks = {{0, 40}, {kSubStart, 520}};  // past MAX_BPF_STACK
  EXPECT_FALSE(Jit::load(*insns, options).ok());
}

// Eight functions of 64 bytes each (512 in all, the kernel's limits): each marks the top and the
// bottom slot of its frame, calls the next, and checks both marks after the call; r0 counts the
// intact frames.
std::string chain_of_eight() {
  std::string text;
  for (int f = 0; f < kMaxCallFrames; ++f) {
    const std::string mark = std::to_string(100 + f);
    text += "f" + std::to_string(f) + ":\n";
    text += "stdw [%r10-8], " + mark + "\n";
    text += "stdw [%r10-64], " + mark + "\n";
    if (f + 1 < kMaxCallFrames) {
      text += "call local f" + std::to_string(f + 1) + "\n";
    } else {
      text += "mov %r0, 0\n";
    }
    text += "ldxdw %r1, [%r10-8]\n";
    text += "jne %r1, " + mark + ", +3\n";
    text += "ldxdw %r1, [%r10-64]\n";
    text += "jne %r1, " + mark + ", +1\n";
    text += "add %r0, 1\n";
    text += "exit\n";
  }
  return text;
}

std::vector<FunctionStack> chain_stacks() {
  std::vector<FunctionStack> stacks;
  // Each function is 9 instructions (8 for the last, which has a mov instead of a call).
  for (std::uint32_t f = 0; f < static_cast<std::uint32_t>(kMaxCallFrames); ++f)
    stacks.push_back({f * 9, 64});
  return stacks;
}

TEST(JitFrames, AChainOfEightFramesAtTheKernelsLimitRuns) {
  auto jit = load(chain_of_eight(), chain_stacks());
  ASSERT_NE(jit, nullptr);
  EXPECT_EQ(jit->stack_reserve(), 512u);
  const RunResult result = jit->run(0, 0, {}, nullptr);
  ASSERT_EQ(result.status, RunStatus::kOk) << to_string(result.status);
  EXPECT_EQ(result.r0, 8u);  // no frame overwrote another
}

std::uint64_t signal_r0 = 0;
RunStatus signal_status = RunStatus::kFault;
const Jit* signal_jit = nullptr;

void run_in_handler(int) {
  const RunResult result = signal_jit->run(0, 0, {}, nullptr);
  signal_status = result.status;
  signal_r0 = result.r0;
}

TEST(JitFrames, TheChainRunsInASignalHandlerOnA16KbSigaltstack) {
  auto jit = load(chain_of_eight(), chain_stacks());
  ASSERT_NE(jit, nullptr);
  static std::uint8_t alt[16384];
  stack_t ss{};
  stack_t old{};
  ss.ss_sp = alt;
  ss.ss_size = sizeof(alt);
  ASSERT_EQ(sigaltstack(&ss, &old), 0);
  struct sigaction sa {};
  struct sigaction old_sa {};
  sa.sa_handler = &run_in_handler;
  sa.sa_flags = SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR2, &sa, &old_sa), 0);
  signal_jit = jit.get();
  signal_status = RunStatus::kFault;
  raise(SIGUSR2);
  sigaction(SIGUSR2, &old_sa, nullptr);
  sigaltstack(&old, nullptr);
  EXPECT_EQ(signal_status, RunStatus::kOk);
  EXPECT_EQ(signal_r0, 8u);
}

TEST(JitFrames, CheckedCodesStackIsTheRealFrame) {
  // Depth 40: r10-40 is in the frame, r10-48 is not (it was with kMaxStack frames).
  auto in = load("stdw [%r10-40], 1\nmov %r0, 0\nexit\n", {{0, 40}}, true);
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(in->run(0, 0, {}, nullptr).status, RunStatus::kOk);
  auto below = load("stdw [%r10-48], 1\nmov %r0, 0\nexit\n", {{0, 40}}, true);
  ASSERT_NE(below, nullptr);
  const RunResult result = below->run(0, 0, {}, nullptr);
  EXPECT_EQ(result.status, RunStatus::kFault);
  auto unverified = load("stdw [%r10-48], 1\nmov %r0, 0\nexit\n", {}, true);
  ASSERT_NE(unverified, nullptr);
  EXPECT_EQ(unverified->run(0, 0, {}, nullptr).status, RunStatus::kOk);
}

}  // namespace
}  // namespace userperf::bpf

namespace userperf::bpf {
namespace {

// Leaf code (no helper, local call, loop or tail call; unchecked): its own entry with no State.
TEST(JitLeaf, ProgramsThatCallNothingAreLeavesAndStartAsTheInterpreterDoes) {
  // r4 is rcx, which carries the stack's top into the entry: it must still start at zero, and
  // r6..r10 must work (saved and restored around the code).
  auto jit = load(
      "mov %r0, %r4\n"
      "add %r0, %r3\n"
      "add %r0, %r9\n"
      "mov %r6, 5\n"
      "mov %r7, 6\n"
      "mov %r8, 7\n"
      "mov %r9, %r1\n"
      "stxdw [%r10-8], %r9\n"
      "ldxdw %r9, [%r10-8]\n"
      "add %r0, %r6\n"
      "add %r0, %r7\n"
      "add %r0, %r8\n"
      "add %r0, %r9\n"
      "exit\n",
      {{0, 8}});
  ASSERT_NE(jit, nullptr);
  EXPECT_TRUE(jit->leaf());
  const RunResult result = jit->run(100, 0, {}, nullptr);
  EXPECT_EQ(result.status, RunStatus::kOk);
  EXPECT_EQ(result.r0, 5u + 6u + 7u + 100u);
}

// A leaf that names none of r6..r10 and has no frame: its entry zeroes r0 (and the r3..r9 it
// names) and falls into the code, whose `exit` is the entry's return: no call, no second `ret`.
// The bytes are xor eax, eax; xor edx, edx (r3); then the program.
TEST(JitLeaf, ALeafThatSavesNothingFallsIntoItsCode) {
  auto jit = load(
      "add %r0, %r1\n"
      "add %r0, %r3\n"
      "jeq %r2, 0, +1\n"
      "exit\n"
      "add %r0, 1\n"
      "exit\n",
      {{0, 0}});
  ASSERT_NE(jit, nullptr);
  ASSERT_TRUE(jit->leaf());
  const std::span<const std::uint8_t> code = jit->code();
  ASSERT_GE(code.size(), 5u);
  EXPECT_EQ(code[0], 0x31);  // xor eax, eax
  EXPECT_EQ(code[1], 0xc0);
  EXPECT_EQ(code[2], 0x31);  // xor edx, edx
  EXPECT_EQ(code[3], 0xd2);
  EXPECT_NE(code[4], 0xe8);                         // the program's first instruction, not a call
  EXPECT_EQ(jit->run(41, 0, {}, nullptr).r0, 42u);  // r2 == 0: past the first exit
  EXPECT_EQ(jit->run(41, 1, {}, nullptr).r0, 41u);

  // A first instruction that sets r0 without reading it: no zeroing before it.
  auto sets_r0 = load("mov %r0, 7\nexit\n", {{0, 0}});
  ASSERT_NE(sets_r0, nullptr);
  EXPECT_FALSE(sets_r0->code()[0] == 0x31 && sets_r0->code()[1] == 0xc0);
  EXPECT_EQ(sets_r0->run(0, 0, {}, nullptr).r0, 7u);
}

TEST(JitLeaf, CallsCheckedCodeAndTailCallsAreNotLeaves) {
  EXPECT_FALSE(load(kTwoFunctions, {{0, 40}, {kSubStart, 24}})->leaf());
  EXPECT_FALSE(load("mov %r1, 0\ncall 1\nexit\n", {{0, 0}})->leaf());
  EXPECT_FALSE(load("mov %r0, 0\nexit\n", {{0, 0}}, true)->leaf());
  EXPECT_TRUE(load("mov %r0, 0\nexit\n", {{0, 0}})->leaf());
}

}  // namespace
}  // namespace userperf::bpf
