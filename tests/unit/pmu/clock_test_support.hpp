// Helpers for the clock tests: burning CPU time, the calling thread's CPU clock and stack, and the
// fields of the samples the ticker tests ask for (IP, TID, PERIOD, REGS_USER = {SP}).
#pragma once

#include <linux/perf_event.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "support/test_events.hpp"

namespace userperf::testing {

constexpr std::uint64_t kMillisecond = 1'000'000;

inline std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// The lost counts of the LOST_SAMPLES records among `records`, added up.
inline std::uint64_t lost_samples(const std::vector<std::vector<std::uint8_t>>& records) {
  std::uint64_t lost = 0;
  for (const auto& r : records) {
    if (record_type(r) == PERF_RECORD_LOST_SAMPLES) lost += field_at<std::uint64_t>(r, 8);
  }
  return lost;
}

inline pid_t own_tid() {
  return static_cast<pid_t>(syscall(SYS_gettid));
}

// Spins until the calling thread has used `ns` more CPU time.
// The clock is read (a system call) once per ~0.5 ms of spinning: a ticker signal that arrives at a
// system-call exit waits for the thread's next tick (clock_timer.cpp), so a loop dense in system
// calls would be sampled at tick rate.
__attribute__((noinline)) inline void burn_cpu_ns(std::uint64_t ns) {
  volatile std::uint64_t sink = 0;  // per call: burning threads share nothing
  const std::uint64_t end = thread_cpu_ns() + ns;
  while (thread_cpu_ns() < end) {
    for (int i = 0; i < 500'000; ++i) sink = sink + static_cast<unsigned>(i);
  }
}

// [low, high) of the calling thread's stack.
struct StackRange {
  std::uint64_t low = 0;
  std::uint64_t high = 0;
  bool contains(std::uint64_t sp) const { return sp >= low && sp < high; }
};

inline StackRange own_stack() {
  StackRange range;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return range;
  void* base = nullptr;
  std::size_t size = 0;
  if (pthread_attr_getstack(&attr, &base, &size) == 0) {
    range.low = reinterpret_cast<std::uint64_t>(base);
    range.high = range.low + size;
  }
  pthread_attr_destroy(&attr);
  return range;
}

inline perf_event_attr ticker_clock_attr(std::uint64_t config, std::uint64_t period) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = config;
  attr.sample_period = period;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER;
  attr.sample_regs_user = 1u << PERF_REG_X86_SP;
  attr.exclude_kernel = 1;
  return attr;
}

// One sample of ticker_clock_attr's layout.
struct ClockSample {
  std::uint32_t tid = 0;
  std::uint64_t period = 0;
  std::uint64_t sp = 0;
};

inline std::vector<ClockSample> clock_samples(const std::vector<std::vector<std::uint8_t>>& recs) {
  std::vector<ClockSample> out;
  for (const auto& r : recs) {
    if (record_type(r) != PERF_RECORD_SAMPLE || r.size() < 48) continue;
    out.push_back({field_at<std::uint32_t>(r, 20), field_at<std::uint64_t>(r, 24),
                   field_at<std::uint64_t>(r, 40)});
  }
  return out;
}

}  // namespace userperf::testing
