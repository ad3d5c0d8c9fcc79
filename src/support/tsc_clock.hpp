// A process-wide user-space CLOCK_MONOTONIC read from the TSC: one rdtsc and a multiply instead of
// a clock_gettime call, converted exactly as the kernel's perf_event_mmap_page defines it
//
//   quot = cyc >> time_shift;  rem = cyc & ((1 << time_shift) - 1);
//   time = time_zero + quot * time_mult + ((rem * time_mult) >> time_shift);
//
// so that a consumer holding (time_zero, time_mult, time_shift) turns a TSC value into the TIME
// userperf would stamp, bit for bit (the control page publishes them: ring/data_ring.hpp).
//
// Used only on x86-64 where /proc/cpuinfo's flags say `constant_tsc` and `nonstop_tsc` (the TSC
// ticks at one rate in every P- and C-state, on every CPU); elsewhere, and whenever the conversion
// cannot be used for a reading, tsc_now() is clock_gettime(CLOCK_MONOTONIC).
//
// Calibration: pairs (tsc, CLOCK_MONOTONIC), each the narrowest of a few rdtsc brackets around
// clock_gettime. The first use takes two pairs ~25 us apart (the first line); after that the line
// is re-anchored each time the time since the last anchor reaches the current interval, which
// doubles from there up to 1 s, the slope measured over the last 1-2 s (so NTP frequency changes
// are followed). A line is used for at most 1.5 intervals past its anchor: a reading later than
// that re-anchors first, or reads clock_gettime if another thread is re-anchoring. A new line
// starts at or above the highest value the old one could have given, and meets the calibrated line
// one interval later (slew, never a step back). On each thread the values never decrease (a
// per-thread "last value" in static TLS, raised by an unlocked cmpxchg that a signal cannot tear).
//
// SIGNAL-SAFE throughout: no locks, no allocation. The re-anchor is done by whichever reader finds
// it due and wins a compare-and-swap; a reader that finds the conversion mid-update (odd
// seqcount: another thread, or the code its signal handler interrupted, is writing it) reads
// clock_gettime instead of waiting. After fork() the child keeps the conversion (the TSC is the
// same); a re-anchor left half done by a thread of the parent is taken over (the lock holds a pid).
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace userperf::support {

// The conversion as the control page publishes it, and its generation (changes with it).
struct TscConversion {
  std::uint64_t time_zero = 0;
  std::uint32_t time_mult = 0;
  std::uint16_t time_shift = 0;
  std::uint64_t generation = 0;
};

// The kernel's formula (perf_event_mmap_page, "cap_usr_time_zero").
constexpr std::uint64_t tsc_to_ns(std::uint64_t cyc, std::uint64_t time_zero,
                                  std::uint32_t time_mult, std::uint16_t time_shift) {
  const std::uint64_t quot = cyc >> time_shift;
  const std::uint64_t rem = cyc & ((std::uint64_t{1} << time_shift) - 1);
  return time_zero + quot * time_mult + ((rem * time_mult) >> time_shift);
}

inline std::uint64_t clock_gettime_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

#if defined(__x86_64__)

inline std::uint64_t read_tsc() {
  return __rdtsc();
}

namespace tsc_detail {

// The published line, written by the re-anchoring thread under `seq` (odd while it writes).
// Each field is its own atomic, stored with release and loaded with acquire (plain moves on
// x86-64), so a reader that saw any new field also sees the odd count on its re-check.
struct Line {
  std::atomic<std::uint32_t> seq{0};
  std::atomic<std::uint32_t> mult{0};
  std::atomic<std::uint32_t> shift{0};
  std::atomic<std::uint64_t> zero{0};
  std::atomic<std::uint64_t> anchor{0};  // TSC at which the line was anchored
  std::atomic<std::uint64_t> due{0};     // cycles after `anchor` the fast path may use it; 0: none
  std::atomic<std::uint64_t> generation{0};
};
extern constinit Line g_line;

// The highest value tsc_now() returned on this thread.
extern __attribute__((tls_model("initial-exec"))) constinit thread_local std::uint64_t t_last;

// Raises t_last to v (unless a higher value is there) and returns what this reading must say:
// max(v, t_last). cmpxchg without the lock prefix: one instruction, so a signal handler on this
// thread cannot come between its load and store, and no other thread writes t_last.
inline std::uint64_t clamp_to_last(std::uint64_t v) {
  std::uint64_t last = t_last;
  for (;;) {
    if (v <= last) return last;
    std::uint64_t seen = last;
    asm volatile("cmpxchgq %2, %1" : "+a"(seen), "+m"(t_last) : "r"(v) : "cc", "memory");
    if (seen == last) return v;
    last = seen;
  }
}

std::uint64_t slow_now();

}  // namespace tsc_detail

// SIGNAL-SAFE. CLOCK_MONOTONIC in ns (see the top of this file for the bound and the fallback).
inline std::uint64_t tsc_now() {
  using tsc_detail::g_line;
  const std::uint32_t seq = g_line.seq.load(std::memory_order_acquire);
  const std::uint64_t zero = g_line.zero.load(std::memory_order_acquire);
  const std::uint32_t mult = g_line.mult.load(std::memory_order_acquire);
  const std::uint32_t shift = g_line.shift.load(std::memory_order_acquire);
  const std::uint64_t anchor = g_line.anchor.load(std::memory_order_acquire);
  const std::uint64_t due = g_line.due.load(std::memory_order_acquire);
  if (__builtin_expect(due == 0, 0)) return tsc_detail::slow_now();  // no line (yet, or ever)
  const std::uint64_t cyc = read_tsc();
  if (__builtin_expect(
          cyc - anchor < due && g_line.seq.load(std::memory_order_relaxed) == seq && !(seq & 1),
          1)) {
    return tsc_detail::clamp_to_last(tsc_to_ns(cyc, zero, mult, static_cast<std::uint16_t>(shift)));
  }
  return tsc_detail::slow_now();
}

// One load: changes whenever the conversion does. 0 until the first line exists.
inline std::uint64_t tsc_generation() {
  return tsc_detail::g_line.generation.load(std::memory_order_acquire);
}

#else

inline std::uint64_t read_tsc() {
  return 0;
}
inline std::uint64_t tsc_now() {
  return clock_gettime_ns(CLOCK_MONOTONIC);
}
inline std::uint64_t tsc_generation() {
  return 0;
}

#endif

// True when tsc_now() reads the TSC (probing /proc/cpuinfo and taking the first line at the first
// call; not signal-unsafe, but 50-100 us the first time).
bool tsc_clock_in_use();

// SIGNAL-SAFE. Re-anchors now, as a reader finding the line due does (the interval still doubles up
// to its cap): true when it did, false when the TSC clock is not in use or another re-anchor holds
// the lock. For tests, and for a caller that knows the line is about to be needed.
bool tsc_reanchor();

enum class TscConversionStatus {
  kOk,
  kUnavailable,  // the TSC clock is not in use, or has no line yet
  kBusy,         // being re-anchored on every one of a few attempts: try again later
};
// SIGNAL-SAFE. The current conversion, read under its seqcount.
TscConversionStatus tsc_read_conversion(TscConversion& out);
inline bool tsc_conversion(TscConversion& out) {
  return tsc_read_conversion(out) == TscConversionStatus::kOk;
}

}  // namespace userperf::support
