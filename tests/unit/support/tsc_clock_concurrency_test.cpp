// The TSC clock over 10 s on 4 threads: every reading within 1 us of a bracketing pair of
// clock_gettime calls, and never going backwards on a thread. Re-anchors happen on whichever
// thread finds the line due (the intervals double up to 1 s).
#include <gtest/gtest.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include "support/tsc_clock.hpp"

namespace userperf::support {
namespace {

constexpr std::uint64_t kBoundNs = 1000;

std::uint64_t mono() {
  return clock_gettime_ns(CLOCK_MONOTONIC);
}

struct ThreadResult {
  std::uint64_t readings = 0;
  std::uint64_t backwards = 0;
  std::uint64_t outside = 0;  // readings more than kBoundNs outside their bracket
  std::uint64_t worst = 0;    // ns outside the bracket, the largest
  std::uint64_t sum_mid = 0;  // sum of |t - midpoint| for the mean
};

TEST(TscClockOverTime, FourThreadsTenSecondsWithinOneMicrosecond) {
  const bool in_use = tsc_clock_in_use();
  const std::uint64_t generation = tsc_generation();
  constexpr int kThreads = 4;
  constexpr std::uint64_t kDurationNs = 10'000'000'000;
  std::vector<ThreadResult> results(kThreads);
  const std::uint64_t end = mono() + kDurationNs;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      ThreadResult& r = results[static_cast<std::size_t>(i)];
      std::uint64_t last = 0;
      for (;;) {
        const std::uint64_t before = mono();
        const std::uint64_t t = tsc_now();
        const std::uint64_t after = mono();
        ++r.readings;
        if (t < last) ++r.backwards;
        last = t;
        const std::uint64_t off = t < before ? before - t : t > after ? t - after : 0;
        if (off > kBoundNs) ++r.outside;
        r.worst = std::max(r.worst, off);
        const std::uint64_t mid = before + (after - before) / 2;
        r.sum_mid += t > mid ? t - mid : mid - t;
        if (after >= end) break;
      }
    });
  }
  for (auto& t : threads) t.join();
  std::uint64_t readings = 0;
  std::uint64_t worst = 0;
  std::uint64_t sum_mid = 0;
  for (int i = 0; i < kThreads; ++i) {
    const ThreadResult& r = results[static_cast<std::size_t>(i)];
    EXPECT_GT(r.readings, 100000u) << "thread " << i;
    EXPECT_EQ(r.backwards, 0u) << "thread " << i;
    EXPECT_EQ(r.outside, 0u) << "thread " << i << ": worst " << r.worst << " ns";
    readings += r.readings;
    worst = std::max(worst, r.worst);
    sum_mid += r.sum_mid;
  }
  std::printf(
      "tsc clock in use: %d; %llu readings, worst %llu ns outside the bracket, mean "
      "|t - bracket middle| %.1f ns, %llu re-anchors\n",
      in_use ? 1 : 0, static_cast<unsigned long long>(readings),
      static_cast<unsigned long long>(worst),
      static_cast<double>(sum_mid) / static_cast<double>(readings),
      static_cast<unsigned long long>(tsc_generation() - generation));
  if (in_use) {
    EXPECT_GT(tsc_generation(), generation) << "the line was re-anchored over 10 s";
  }
}

}  // namespace
}  // namespace userperf::support
