// The slot table the clock signal handler, the ticker thread and the control path share. A
// signal names a slot and the slot's generation, so a signal that arrives after its event is gone
// (or after the slot went to another event) finds a mismatch instead of a dangling pointer.
#pragma once

#include <sys/types.h>
#include <time.h>

#include <array>
#include <atomic>
#include <cstdint>

#include "core/engine.hpp"
#include "pmu/clock/clock_signal_value.hpp"

namespace userperf::pmu {

struct ClockTimer;

struct ClockSlot {
  // Odd while the slot holds a live event; bumped when it is claimed and again when emptied.
  std::atomic<std::uint32_t> generation{0};
  std::atomic<core::Engine*> engine{nullptr};
  std::atomic<core::Event*> event{nullptr};
  std::atomic<ClockTimer*> owner{nullptr};  // the event's ClockTimer (a fork child updates it)
  // [stack_low, stack_high): the sampled thread's own stack, {0, 0} when unknown. The handler
  // walks and copies only from an SP inside it.
  std::atomic<std::uint64_t> stack_low{0};
  std::atomic<std::uint64_t> stack_high{0};
  std::atomic<pid_t> tid{0};
  // The thread's CPU time its samples (and periods counted lost) stand for, written by the handler
  // on the sampled thread and when the clock is armed. Up to half a period ahead of the thread's
  // CPU time: a sample takes the pending time rounded to whole periods.
  std::atomic<std::uint64_t> accounted_cpu_ns{0};
  // The thread's CPU time when it was last poked, and when it last asked the external ticker for
  // pokes (clock_timer.hpp, ExternalTicker).
  std::atomic<std::uint64_t> poked_cpu_ns{0};
  std::atomic<std::uint64_t> busy_said_cpu_ns{0};
  // In-process ticker state written by the control path: /proc/self/task/TID/syscall and
  // schedstat, the period (0 while not on the ticker), the thread's CPU time and CLOCK_MONOTONIC
  // when armed, and a counter bumped on every arm.
  std::atomic<int> syscall_fd{-1};
  std::atomic<int> schedstat_fd{-1};
  std::atomic<std::uint64_t> ticker_period{0};
  std::atomic<std::uint64_t> armed_cpu_ns{0};
  std::atomic<std::uint64_t> armed_wall_ns{0};
  std::atomic<std::uint32_t> arm_seq{0};
  // In-process ticker pokes the handler received: the ticker keeps one poke in flight per slot, so
  // a thread that blocks the signal does not fill the user's queue (RLIMIT_SIGPENDING).
  std::atomic<std::uint32_t> ticker_delivered{0};
  // The thread's CPU-time timer: periodic while the clock is armed, so the thread's own scheduler
  // ticks sample it whatever pokes it gets. Periods a poke found at a system-call exit wait here
  // for its next tick (clock_timer.cpp, account).
  std::atomic<timer_t> timer{};
  std::atomic<std::uint64_t> reaimed_periods{0};
};

extern std::array<ClockSlot, kClockSlots> g_clock_slots;
// One past the highest slot ever claimed: the ticker scans [0, g_clock_slot_end).
extern std::atomic<int> g_clock_slot_end;
// Bumped in a fork child: a ClockTimer of an older process image (its fork_epoch) is inert there.
extern std::atomic<std::uint64_t> g_clock_fork_epoch;

// Makes a thread's CPU-time timer fire every `period_ns` of its CPU time (at least every 10 us,
// the kernel's hrtimer clamp). 0 or -errno.
int arm_periodic_cpu_timer(timer_t timer, std::uint64_t period_ns);

// glibc's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED): the CPU-time clock of one thread of this
// process.
inline clockid_t thread_cpu_clock(pid_t tid) {
  return static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 4 | 2);
}

}  // namespace userperf::pmu
