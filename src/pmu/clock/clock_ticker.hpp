// The in-process clock ticker: one process-wide thread that pokes threads at periods a CPU-time
// POSIX timer cannot deliver. CPU-time timers expire on scheduler ticks (HZ, 250 here), so a 1 ms
// period arrives as 250 signals/s; and under CPU contention a timer can go tens of milliseconds
// of its thread's CPU time past its expiry without firing (bench/cpu_timer_stall_probe.c), so
// long periods are on the ticker too. The ticker wakes on CLOCK_MONOTONIC, reads each armed
// thread's CPU clock and, once a thread has used a period its samples do not stand for yet (half of
// one when another thread's period woke the ticker) and is busy (running, not about to be woken
// from a blocking call by our signal), queues it the clock signal (rt_tgsigqueueinfo, SI_TIMER with
// timer id kOwnTickerTimerId: exec discards it if still queued) with the slot and its generation;
// the handler counts the periods (clock_timer.hpp). A program recorded from its start has none:
// the recorder pokes it (clock_timer.hpp, ExternalTicker). One attached to (record -p) has one.
#pragma once

#include <cstdint>

namespace userperf::pmu {

// The ticker thread's name (what `userperf record -p` tells from the program's own threads).
inline constexpr const char* kTickerThreadName = "userperf-ticker";

// The ticker's shortest sleep: below 100 us its own wakeups would cost more CPU than the threads
// it samples (one wakeup is tens of microseconds in a VM); shorter periods arrive as several
// periods per signal.
constexpr std::uint64_t kTickerMinSleepNs = 100'000;

// Puts slot (claimed, tid set) on the ticker with `period_ns`, starting the ticker thread on first
// use. Returns 0 or -errno (no /proc, no thread).
int ticker_arm(int slot, std::uint64_t period_ns);
// Takes the slot off the ticker; on return the ticker sends no further signal for it.
void ticker_disarm(int slot);
// ticker_disarm, then closes the slot's /proc stat file.
void ticker_release(int slot);
// Tells the ticker that signals it sent may have been discarded, never delivered (the clock signal
// was ignored for a while: the agent's exec wrapper, after a failed exec). At its next pass it
// stops waiting for them, and every armed thread is signalled again. Not signal-safe.
void ticker_signals_discarded();
// In a fork child (one thread; the ticker was not inherited): forgets the ticker thread and every
// slot's ticker state so that the next ticker_arm starts afresh.
void ticker_after_fork_child();

}  // namespace userperf::pmu
