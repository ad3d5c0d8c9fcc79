// What a fork does to the clocks. The child has one thread (the one that forked) and none of the
// parent's POSIX timers or ticker thread: clock_timers_after_fork_child forgets every other
// thread's clock, and the forking thread's clocks follow it lazily (clock_timers_fork_child starts
// their timers over the child's thread, follow_forked_clocks moves their slots at its first
// signal), so that a child that only execs writes to no page of the agent's.
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>

#include "pmu/clock/clock_slots.hpp"
#include "pmu/clock/clock_ticker.hpp"
#include "pmu/clock/clock_timer.hpp"
#include "support/task_ids.hpp"

namespace userperf::pmu {

namespace {

// The clocks a fork child's thread takes over from the thread that forked
// (clock_timers_fork_child): their slots, as the parent left them, and the new timers over the
// child's thread. Thread-local (the child has one thread), in the static TLS block that fork has
// already copied: setting them copies no page of the agent's into the child.
struct ForkedClock {
  int slot = -1;
  std::uint32_t generation = 0;
  timer_t timer{};
};
constexpr int kMaxForkedClocks = 16;
__attribute__((
    tls_model("initial-exec"))) constinit thread_local ForkedClock t_forked[kMaxForkedClocks];
__attribute__((tls_model("initial-exec"))) constinit thread_local int t_nforked = 0;
__attribute__((tls_model("initial-exec"))) constinit thread_local bool t_follow_pending = false;
using FollowedFn = void (*)();
__attribute__((tls_model("initial-exec"))) constinit thread_local FollowedFn t_followed = nullptr;

}  // namespace

int clock_timers_fork_child(pid_t parent_tid, void (*followed)()) {
  t_nforked = 0;
  t_followed = followed;
  const pid_t self = support::current_tid();
  const int end = g_clock_slot_end.load(std::memory_order_relaxed);
  for (int i = 0; i < end && t_nforked < kMaxForkedClocks; ++i) {
    const ClockSlot& slot = g_clock_slots[static_cast<std::size_t>(i)];
    const std::uint32_t generation = slot.generation.load(std::memory_order_relaxed);
    const core::Event* event = slot.event.load(std::memory_order_relaxed);
    if ((generation & 1) == 0 || event == nullptr ||
        slot.tid.load(std::memory_order_relaxed) != parent_tid) {
      continue;
    }
    sigevent sev{};
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = clock_signal();
    sev.sigev_value.sival_ptr = encode_clock_signal({i, generation});
    sev._sigev_un._tid = self;
    timer_t timer{};
    if (timer_create(thread_cpu_clock(self), &sev, &timer) != 0) continue;
    const std::uint64_t period = event->sample_period.load(std::memory_order_relaxed);
    if (event->state.load(std::memory_order_relaxed) == core::EventState::kActive && period != 0) {
      arm_periodic_cpu_timer(timer, period);
    }
    t_forked[t_nforked++] = {i, generation, timer};
  }
  t_follow_pending = t_nforked > 0;
  return t_nforked;
}

bool forked_clocks_pending() {
  return t_follow_pending;
}

// SIGNAL-SAFE: stores, and syscalls for the ids.
void follow_forked_clocks() {
  if (!t_follow_pending) return;
  t_follow_pending = false;
  const pid_t self = support::current_tid();
  const std::uint64_t epoch = g_clock_fork_epoch.fetch_add(1, std::memory_order_relaxed) + 1;
  for (int k = 0; k < t_nforked; ++k) {
    const ForkedClock& f = t_forked[k];
    ClockSlot& slot = g_clock_slots[static_cast<std::size_t>(f.slot)];
    if (slot.generation.load(std::memory_order_relaxed) != f.generation) continue;
    core::Event* event = slot.event.load(std::memory_order_relaxed);
    slot.tid.store(self, std::memory_order_relaxed);
    slot.timer.store(f.timer, std::memory_order_relaxed);
    // What the child's thread used since the fork is its first sample's.
    slot.accounted_cpu_ns.store(0, std::memory_order_relaxed);
    slot.reaimed_periods.store(0, std::memory_order_relaxed);
    slot.poked_cpu_ns.store(0, std::memory_order_relaxed);
    slot.busy_said_cpu_ns.store(0, std::memory_order_relaxed);
    slot.ticker_period.store(0, std::memory_order_relaxed);
    if (event != nullptr) event->pid = self;
    if (ClockTimer* owner = slot.owner.load(std::memory_order_relaxed)) {
      owner->timer = f.timer;
      owner->fork_epoch = epoch;
      owner->on_ticker = false;
    }
  }
  if (t_followed != nullptr) t_followed();
}

void clock_timers_after_fork_child() {
  ticker_after_fork_child();
  const pid_t self = support::current_tid();
  int end = 0;
  // Every slot, not just those below g_clock_slot_end: a thread may have been claiming one when
  // the process forked.
  // Only slots that hold something are written: a store into each of 4096 slots would copy every
  // page of the table in each fork child (a shell forks for every command it runs).
  for (ClockSlot& slot : g_clock_slots) {
    if (slot.event.load(std::memory_order_relaxed) == nullptr &&
        slot.engine.load(std::memory_order_relaxed) == nullptr &&
        (slot.generation.load(std::memory_order_relaxed) & 1) == 0) {
      continue;
    }
    // A clock that followed this thread (clock_timers_fork_child) stays.
    if ((slot.generation.load(std::memory_order_relaxed) & 1) != 0 &&
        slot.tid.load(std::memory_order_relaxed) == self && !t_follow_pending) {
      end = std::max(end, static_cast<int>(&slot - g_clock_slots.data()) + 1);
      continue;
    }
    if (slot.generation.load(std::memory_order_relaxed) & 1) {
      slot.generation.fetch_add(1, std::memory_order_relaxed);
    }
    slot.engine.store(nullptr, std::memory_order_relaxed);
    slot.event.store(nullptr, std::memory_order_relaxed);
    slot.tid.store(0, std::memory_order_relaxed);
    slot.stack_low.store(0, std::memory_order_relaxed);
    slot.stack_high.store(0, std::memory_order_relaxed);
  }
  g_clock_slot_end.store(end, std::memory_order_relaxed);
  const std::uint64_t epoch = g_clock_fork_epoch.fetch_add(1, std::memory_order_relaxed) + 1;
  // The kept clocks belong to this image too.
  for (int i = 0; i < end; ++i) {
    ClockSlot& slot = g_clock_slots[static_cast<std::size_t>(i)];
    if (ClockTimer* owner = slot.owner.load(std::memory_order_relaxed);
        owner != nullptr && (slot.generation.load(std::memory_order_relaxed) & 1) != 0) {
      owner->fork_epoch = epoch;
    }
  }
}

}  // namespace userperf::pmu
