// Per-thread CPU-time timers that deliver a signal to the sampled thread; the handler turns each
// expiry into an overflow. The handler finds its event through a slot table, so a signal that
// arrives after the event is gone finds an empty slot instead of a dangling pointer.
#pragma once

#include <time.h>

#include <cstdint>

#include "core/engine.hpp"

namespace userperf::pmu {

struct ClockTimer {
  timer_t timer{};
  int slot = -1;
  std::uint64_t stack_high = 0;  // top of the sampled thread's stack, 0 when unknown
};

// Signal used for timer expiries (SIGRTMIN + 4 unless USERPERF_SIGNAL names another number).
int clock_signal();

// Creates a stopped timer over `tid`'s CPU clock that signals `tid`. Returns 0 or -errno.
int clock_timer_create(core::Engine& engine, core::Event& event, pid_t tid, ClockTimer& out);
int clock_timer_arm(ClockTimer& timer, std::uint64_t period_ns);
void clock_timer_disarm(ClockTimer& timer);
// Deletes the timer and empties its slot. The caller then waits out a grace period.
void clock_timer_destroy(ClockTimer& timer);

}  // namespace userperf::pmu
