// What the clock handler reads from a signal frame (src/pmu/clock/user_context.hpp): its
// registers as perf numbers them; whether the signal came on the way out of a system call, on
// made-up frames (the rules, one by one, including a paravirtualized guest's late delivery) and on
// frames the kernel made (a signal that interrupts a blocking read, one that interrupts a loop);
// the bounded frame-pointer walk on a made-up stack; and the stacks that bound it.
#include "pmu/clock/user_context.hpp"

#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>

namespace userperf::pmu {
namespace {

// A frame as the kernel leaves it after `syscall`: RIP the instruction after it, RCX the same
// address, R11 the RFLAGS of that moment (IF and the reserved bit 1 set).
mcontext_t syscall_return_frame(std::uint64_t ip, std::uint64_t flags = 0x246) {
  mcontext_t mc{};
  mc.gregs[REG_RIP] = static_cast<greg_t>(ip);
  mc.gregs[REG_RCX] = static_cast<greg_t>(ip);
  mc.gregs[REG_R11] = static_cast<greg_t>(flags);
  mc.gregs[REG_EFL] = static_cast<greg_t>(flags);
  return mc;
}

TEST(SyscallExit, ReturnAddressInRcxAndFlagsInR11) {
  EXPECT_TRUE(delivered_at_syscall_exit(syscall_return_frame(0x401000)));
}

TEST(SyscallExit, RestartedCallIsTwoBytesBeforeRcx) {
  mcontext_t mc = syscall_return_frame(0x401000);
  mc.gregs[REG_RIP] -= 2;  // the kernel rewinds RIP onto the syscall instruction
  EXPECT_TRUE(delivered_at_syscall_exit(mc));
}

TEST(SyscallExit, FlagsOtherThanR11AtTheReturnAddressAreUserCode) {
  mcontext_t mc = syscall_return_frame(0x401000);
  mc.gregs[REG_EFL] ^= 0x1;  // CF: an instruction ran since
  EXPECT_FALSE(delivered_at_syscall_exit(mc));
}

// A paravirtualized guest delivers a tick that came during the call once the wrapper's
// `cmp rax, -4095` (6 bytes) and even its `ja` (2 more) have run: the arithmetic flags are the
// compare's, the others still R11's.
TEST(SyscallExit, UpToEightBytesPastTheReturnWithOnlyArithmeticFlagsChanged) {
  for (const std::uint64_t past : {1, 6, 8}) {
    mcontext_t mc = syscall_return_frame(0x401000);
    mc.gregs[REG_RIP] += static_cast<greg_t>(past);
    mc.gregs[REG_EFL] ^= 0x8d5;  // CF PF AF ZF SF OF
    EXPECT_TRUE(delivered_at_syscall_exit(mc)) << past << " bytes past";
  }
}

TEST(SyscallExit, NineBytesPastTheReturnIsUserCode) {
  mcontext_t mc = syscall_return_frame(0x401000);
  mc.gregs[REG_RIP] += 9;
  EXPECT_FALSE(delivered_at_syscall_exit(mc));
}

TEST(SyscallExit, PastTheReturnWithAControlFlagChangedIsUserCode) {
  for (const std::uint64_t flag : {0x100 /* TF */, 0x200 /* IF */, 0x400 /* DF */}) {
    mcontext_t mc = syscall_return_frame(0x401000);
    mc.gregs[REG_RIP] += 6;
    mc.gregs[REG_EFL] ^= static_cast<greg_t>(flag);
    EXPECT_FALSE(delivered_at_syscall_exit(mc)) << std::hex << flag;
  }
}

TEST(SyscallExit, BeforeTheReturnAddressIsUserCode) {
  for (const std::int64_t off : {-1, -3, -8}) {
    mcontext_t mc = syscall_return_frame(0x401000);
    mc.gregs[REG_RIP] += off;
    EXPECT_FALSE(delivered_at_syscall_exit(mc)) << off;
  }
}

// Frames the kernel made: one for a signal that interrupted a read blocked on an empty pipe, one
// for a signal that interrupted a loop holding 0 in RCX.
std::atomic<bool> g_at_exit{false};
std::atomic<int> g_handled{0};
volatile std::uint8_t g_spin_done = 0;

void record_frame(int, siginfo_t*, void* context) {
  g_at_exit.store(delivered_at_syscall_exit(static_cast<ucontext_t*>(context)->uc_mcontext));
  g_spin_done = 1;
  g_handled.fetch_add(1);
}

struct SignalHandlerScope {
  struct sigaction old {};
  explicit SignalHandlerScope(int flags) {
    struct sigaction sa {};
    sa.sa_sigaction = record_frame;
    sa.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, &old);
  }
  ~SignalHandlerScope() { sigaction(SIGUSR1, &old, nullptr); }
};

void wait_until_blocked(pid_t tid) {
  // The thread's state in /proc: S once it sleeps in the read.
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", static_cast<int>(tid));
  for (int i = 0; i < 2000; ++i) {
    if (FILE* f = std::fopen(path, "re")) {
      char line[512] = {};
      const bool read = std::fgets(line, sizeof line, f) != nullptr;
      std::fclose(f);
      const char* close = read ? std::strrchr(line, ')') : nullptr;
      if (close != nullptr && close[1] == ' ' && close[2] == 'S') return;
    }
    usleep(1000);
  }
}

TEST(SyscallExit, KernelsFrameOfASignalInterruptingABlockedReadIsAnExit) {
  for (const int flags : {0, SA_RESTART}) {
    SignalHandlerScope scope(flags);
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    g_handled = 0;
    std::atomic<pid_t> tid{0};
    std::thread reader([&] {
      tid = static_cast<pid_t>(syscall(SYS_gettid));
      char byte;
      // Interrupted (EINTR without SA_RESTART); with it the read resumes and gets the byte.
      (void)!read(fds[0], &byte, 1);
    });
    while (tid.load() == 0) usleep(100);
    wait_until_blocked(tid);
    ASSERT_EQ(syscall(SYS_tgkill, getpid(), tid.load(), SIGUSR1), 0);
    while (g_handled.load() == 0) usleep(100);
    ASSERT_EQ(write(fds[1], "x", 1), 1);
    reader.join();
    close(fds[0]);
    close(fds[1]);
    EXPECT_TRUE(g_at_exit.load()) << (flags != 0 ? "SA_RESTART" : "no SA_RESTART");
  }
}

TEST(SyscallExit, KernelsFrameOfASignalInterruptingALoopIsNot) {
  SignalHandlerScope scope(0);
  g_handled = 0;
  g_spin_done = 0;
  std::atomic<pid_t> tid{0};
  std::thread spinner([&] {
    tid = static_cast<pid_t>(syscall(SYS_gettid));
    // RCX holds 0 throughout the loop, so it never names the interrupted instruction.
    asm volatile(
        "xor %%ecx, %%ecx\n"
        "1: cmpb $0, (%0)\n"
        "je 1b\n"
        :
        : "r"(&g_spin_done)
        : "rcx", "cc", "memory");
  });
  while (tid.load() == 0) usleep(100);
  usleep(2000);  // into the loop
  ASSERT_EQ(syscall(SYS_tgkill, getpid(), tid.load(), SIGUSR1), 0);
  spinner.join();
  ASSERT_EQ(g_handled.load(), 1);
  EXPECT_FALSE(g_at_exit.load());
}

TEST(SampleRegs, EachPerfRegisterIsTheFramesRegisterOfThatName) {
  mcontext_t mc{};
  for (int i = 0; i < NGREG; ++i) mc.gregs[i] = 0x1000 + i;  // every slot its own value
  mc.gregs[REG_CSGSFS] = 0x002b0000'00000033;                // cs 0x33 in the low half
  core::SampleRegs regs;
  sample_regs_of(mc, regs);
  EXPECT_EQ(regs.abi, static_cast<std::uint64_t>(PERF_SAMPLE_REGS_ABI_64));
  const std::pair<int, int> expected[] = {
      {PERF_REG_X86_AX, REG_RAX}, {PERF_REG_X86_BX, REG_RBX},    {PERF_REG_X86_CX, REG_RCX},
      {PERF_REG_X86_DX, REG_RDX}, {PERF_REG_X86_SI, REG_RSI},    {PERF_REG_X86_DI, REG_RDI},
      {PERF_REG_X86_BP, REG_RBP}, {PERF_REG_X86_SP, REG_RSP},    {PERF_REG_X86_IP, REG_RIP},
      {PERF_REG_X86_R8, REG_R8},  {PERF_REG_X86_FLAGS, REG_EFL}, {PERF_REG_X86_R15, REG_R15}};
  for (const auto& [perf, greg] : expected) {
    EXPECT_EQ(regs.values[perf], static_cast<std::uint64_t>(0x1000 + greg)) << "perf reg " << perf;
  }
  for (int perf = PERF_REG_X86_R8; perf <= PERF_REG_X86_R15; ++perf) {
    EXPECT_EQ(regs.values[perf],
              static_cast<std::uint64_t>(0x1000 + REG_R8 + perf - PERF_REG_X86_R8));
  }
  EXPECT_EQ(regs.values[PERF_REG_X86_CS], 0x33u);
  EXPECT_EQ(regs.values[PERF_REG_X86_SS], 0x2bu);
}

// A made-up stack: frames at increasing addresses, each {previous fp, return address}.
struct MadeUpStack {
  alignas(16) std::uint64_t words[16] = {};
  std::uint64_t at(int i) const { return reinterpret_cast<std::uint64_t>(&words[i]); }
  std::uint64_t high() const { return at(16); }
};

TEST(WalkUserFrames, FollowsFramesUpToTheStacksEnd) {
  MadeUpStack s;
  s.words[2] = s.at(6);  // frame at 2 -> frame at 6
  s.words[3] = 0x401111;
  s.words[6] = s.at(10);  // -> frame at 10
  s.words[7] = 0x402222;
  s.words[10] = s.at(15);  // -> 15: only 8 bytes below the end, not a whole frame
  s.words[11] = 0x403333;
  std::uint64_t out[16];
  const std::uint64_t n = walk_user_frames(0x400000, s.at(2), s.at(0), s.high(), out, 16);
  ASSERT_EQ(n, 5u);
  EXPECT_EQ(out[0], static_cast<std::uint64_t>(PERF_CONTEXT_USER));
  EXPECT_EQ(out[1], 0x400000u);
  EXPECT_EQ(out[2], 0x401111u);
  EXPECT_EQ(out[3], 0x402222u);
  EXPECT_EQ(out[4], 0x403333u);
}

TEST(WalkUserFrames, StopsAtAFrameThatDoesNotMoveUp) {
  MadeUpStack s;
  s.words[4] = s.at(2);  // points down
  s.words[5] = 0x401111;
  std::uint64_t out[16];
  EXPECT_EQ(walk_user_frames(0x400000, s.at(4), s.at(0), s.high(), out, 16), 3u);
  EXPECT_EQ(out[2], 0x401111u);
}

TEST(WalkUserFrames, StopsAtAReturnAddressOutsideUserSpaceOrZero) {
  for (const std::uint64_t bad : {std::uint64_t{0}, std::uint64_t{1} << 56, ~std::uint64_t{0}}) {
    MadeUpStack s;
    s.words[2] = s.at(6);
    s.words[3] = bad;
    std::uint64_t out[16];
    EXPECT_EQ(walk_user_frames(0x400000, s.at(2), s.at(0), s.high(), out, 16), 2u) << bad;
  }
}

TEST(WalkUserFrames, ReadsNothingOutsideTheBounds) {
  MadeUpStack s;
  std::uint64_t out[16];
  // Below sp, at or past the end, misaligned.
  for (const std::uint64_t fp : {s.at(0) - 16, s.high(), s.at(2) + 4}) {
    EXPECT_EQ(walk_user_frames(0x400000, fp, s.at(1), s.high(), out, 16), 2u) << std::hex << fp;
  }
  // RBP used as a scratch register, -16 or -8, under a bound at the top of the address space:
  // fp + 16 wraps to 0 or 8, so a bound written as fp + 16 <= high would read there.
  for (const std::uint64_t fp : {~std::uint64_t{15}, ~std::uint64_t{7}}) {
    EXPECT_EQ(walk_user_frames(0x400000, fp, s.at(1), ~std::uint64_t{0}, out, 16), 2u)
        << std::hex << fp;
  }
  // No known stack (high 0): only the ip.
  EXPECT_EQ(walk_user_frames(0x400000, s.at(2), s.at(0), 0, out, 16), 2u);
}

TEST(WalkUserFrames, WritesAtMostMax) {
  MadeUpStack s;
  for (int i = 0; i + 2 < 16; i += 2) {
    s.words[i] = s.at(i + 2);
    s.words[i + 1] = 0x401000 + static_cast<std::uint64_t>(i);
  }
  std::uint64_t out[4];
  EXPECT_EQ(walk_user_frames(0x400000, s.at(0), s.at(0), s.high(), out, 4), 4u);
}

TEST(ThreadStacks, EachThreadsStackHoldsItsLocals) {
  int on_main = 0;
  const auto here = reinterpret_cast<std::uint64_t>(&on_main);
  const StackBounds main = main_thread_stack();
  EXPECT_TRUE(here >= main.low && here < main.high) << "gtest runs the test on the main thread";
  const StackBounds own = current_thread_stack();
  EXPECT_TRUE(here >= own.low && here < own.high);
  std::thread([&] {
    int local = 0;
    const auto there = reinterpret_cast<std::uint64_t>(&local);
    const StackBounds stack = current_thread_stack();
    EXPECT_TRUE(there >= stack.low && there < stack.high);
    EXPECT_FALSE(there >= main.low && there < main.high);
    EXPECT_EQ(main_thread_stack().high, main.high) << "the same from any thread";
  }).join();
}

TEST(ThreadStacks, NotedStacksAreKeptUntilForgotten) {
  const pid_t tid = 4194304 + 7;  // above PID_MAX_LIMIT: no thread's
  EXPECT_EQ(noted_thread_stack(tid).high, 0u);
  note_thread_stack(tid, 0x7000, 0x9000);
  EXPECT_EQ(noted_thread_stack(tid).low, 0x7000u);
  EXPECT_EQ(noted_thread_stack(tid).high, 0x9000u);
  note_thread_stack(tid, 0x8000, 0xa000);  // told again: the newer
  EXPECT_EQ(noted_thread_stack(tid).low, 0x8000u);
  note_thread_stack(tid, 0, 0);
  EXPECT_EQ(noted_thread_stack(tid).high, 0u);
}

}  // namespace
}  // namespace userperf::pmu
