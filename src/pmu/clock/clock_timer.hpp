// Per-thread clocks that deliver a signal to the sampled thread; the handler turns each signal
// into samples. Every armed clock has a periodic POSIX timer over the thread's CPU-time clock
// (SI_TIMER), which fires on the thread's scheduler ticks (HZ: 250 here), and every period is
// also poked by a ticker: the in-process ticker thread
// (clock_ticker.hpp; SI_TIMER with timer id kOwnTickerTimerId, so that exec discards a poke still
// queued, as it does the timers' own signals) or, for a program recorded from its start, the
// recorder (ExternalTicker; SI_QUEUE from its pid). A ticker gives periods shorter than a tick
// their rate, and any period its samples when the timer stalls: under CPU contention a thread's
// CPU-time timer can go 40-100 ms of the thread's CPU time past its expiry without firing
// (bench/cpu_timer_stall_probe.c; docs/record.md, Limits). Whoever
// signals, the handler counts the periods itself from the thread's CPU clock, so every sample's
// PERIOD is the CPU time it stands for.
// The handler finds its event through a slot table (clock_slots.hpp), so a signal that arrives
// after the event is gone finds an empty slot instead of a dangling pointer.
#pragma once

#include <time.h>

#include <cstdint>

#include "core/engine.hpp"

namespace userperf::pmu {

// The timer id the in-process ticker's pokes carry (SI_TIMER): no timer_create gives a negative id.
inline constexpr int kOwnTickerTimerId = -1;

struct ClockTimer {
  timer_t timer{};
  int slot = -1;
  std::uint64_t fork_epoch = 0;  // the process image (clock_timers_after_fork_child) it belongs to
  bool on_ticker = false;
  // [stack_low, stack_high): the sampled thread's stack, {0, 0} when unknown.
  std::uint64_t stack_low = 0;
  std::uint64_t stack_high = 0;
};

// Signal used for clock samples (SIGRTMIN + 4 unless USERPERF_SIGNAL names another number).
int clock_signal();

// Another process pokes this process's clocks instead of an in-process ticker thread: the recorder
// of `userperf record`, so that a recorded program holds no thread of userperf's (a thread costs a
// short-lived process as much CPU as its own start, and changes what the program sees). The
// handler accepts pokes from `pid`; `busy(tid)` (SIGNAL-SAFE: called in the signal handler) tells
// the ticker that thread `tid`, which its own CPU-time timer found busy, got no poke for a while.
// Set once, before any clock is armed; a fork child keeps it.
struct ExternalTicker {
  pid_t pid = 0;
  void (*busy)(pid_t tid) = nullptr;
};
void use_external_ticker(const ExternalTicker& ticker);

// Asked on the sampled thread before a clock's periods are taken (a sample, or LOST_SAMPLES):
// false leaves them pending for the thread's next signal. The recorder's agent tells the recorder
// about a thread at its first sample, from here, so that a process that ends before one costs the
// recorder nothing. SIGNAL-SAFE (called in the signal handler); nullptr: always open.
void set_clock_sample_gate(bool (*gate)());

// What a poke for `event`'s clock carries in si_value (clock_slots.hpp: slot and generation), for
// the external ticker; 0 when the event is no clock of this process image.
std::uint32_t clock_poke_value(const core::Event& event);

// Creates a stopped clock over `tid`'s CPU time that signals `tid` and samples into `engine`.
// Returns 0 or -errno.
int clock_timer_create(core::Engine& engine, core::Event& event, pid_t tid, ClockTimer& out);
int clock_timer_arm(ClockTimer& timer, std::uint64_t period_ns);
// On return no further signal is sent for the timer (one already sent may still arrive).
void clock_timer_disarm(ClockTimer& timer);
// Deletes the timer, empties its slot and waits until no handler uses the event.
void clock_timer_destroy(ClockTimer& timer);

// Periods the slot's thread used that could not be sampled (it could not take the clock signal):
// one PERF_RECORD_LOST_SAMPLES of `lost` in the event's ring, the periods added to its count.
// SIGNAL-SAFE (the handler calls it). False when the slot no longer holds `generation` or the ring
// had no room.
bool clock_slot_count_lost(int slot, std::uint32_t generation, std::uint64_t lost);

// The calling thread is ending (its thread returns, or the process calls exit()): the whole
// periods each of its clocks ran since its last sample, which no sample will take now, are counted
// lost (the event's lost_samples and count), as the kernel's clock would have sampled them. The
// sample gate (set_clock_sample_gate) opens first, so that the recorder hears of a thread, or a
// process, that ends before its first sample. Normal context, the clock signal blocked by the
// caller, who says whether the thread blocked it before (`blocks_signal`: its periods are left to
// the clock's stop, which counts them as LOST_SAMPLES in its ring). A fork child's clocks that have
// not followed it are not counted.
void count_ending_thread_periods(bool blocks_signal);

// A fork child's clocks follow its thread lazily. In the child (one thread: the one that forked),
// clock_timers_fork_child starts a CPU-time timer over it for each clock of the forking thread
// (`parent_tid`) and leaves the slot table, the events and everything else as the parent wrote
// them: a write there would copy the page into the child, and most fork children (a shell's) exec
// at once. At the first signal of one of those timers the handler makes the clocks follow: their
// slots and events name the child's thread, their timers are the new ones, and `followed` (the
// caller's, SIGNAL-SAFE) runs before the sample. Returns how many clocks will follow.
int clock_timers_fork_child(pid_t parent_tid, void (*followed)());
// Whether clocks started by clock_timers_fork_child have not followed yet (on this thread).
bool forked_clocks_pending();
// Makes them follow now (normal context; the caller blocks the clock signal around it).
void follow_forked_clocks();

// In a fork child (one thread; POSIX timers and the ticker thread are not inherited): forgets
// every slot and the ticker so that new clocks can be created. Slots of the clocks that followed
// (clock_timers_fork_child) are kept. Clocks created before the fork
// become inert: arming, disarming and destroying them touch neither their old events nor the new
// ones.
void clock_timers_after_fork_child();

}  // namespace userperf::pmu
