// Where a clock signal found its thread: the registers of the signal frame, the frame-pointer
// chain above them (bounded to the thread's own stack), and whether the signal came on the way out
// of a system call rather than into the middle of user code. With them, the stacks that bound the
// walk, known per thread before its clock is armed. What the signal frame says is read by pure
// functions, SIGNAL-SAFE, so that each rule can be tested on a made-up frame
// (tests/unit/pmu/user_context_test.cpp).
#pragma once

#include <sys/types.h>
#include <ucontext.h>

#include <cstdint>

#include "core/sample_data.hpp"

namespace userperf::pmu {

// [low, high): a thread's stack; {0, 0} when unknown.
struct StackBounds {
  std::uint64_t low = 0;
  std::uint64_t high = 0;
};

// The signal frame's general registers as perf's x86-64 sample registers (REGS_USER/REGS_INTR).
// SIGNAL-SAFE.
void sample_regs_of(const mcontext_t& mc, core::SampleRegs& regs);

// PERF_CONTEXT_USER, ip, then the return addresses from the frame at fp, reading only
// [sp, stack_high): the clock handler's callchain, and the agent's off-CPU wrappers'. Returns the
// entries written (at most max). SIGNAL-SAFE.
std::uint64_t walk_user_frames(std::uint64_t ip, std::uint64_t fp, std::uint64_t sp,
                               std::uint64_t stack_high, std::uint64_t* out, int max);

// Whether the frame is that of a signal delivered as the thread returned from a system call.
// SIGNAL-SAFE.
bool delivered_at_syscall_exit(const mcontext_t& mc);

// The calling thread's stack (normal context).
StackBounds current_thread_stack();
// The main thread's stack, from any thread (normal context).
StackBounds main_thread_stack();
// Thread `tid`'s stack as note_thread_stack last told it; {0, 0} when not told.
StackBounds noted_thread_stack(pid_t tid);
// [low, high) of thread `tid`'s stack, for the clock timers opened on it from another thread
// (an agent attached to a running process hears them from the recorder, which read each thread's
// stack pointer with ptrace); low >= high forgets it. Normal context.
void note_thread_stack(pid_t tid, std::uint64_t low, std::uint64_t high);

}  // namespace userperf::pmu
