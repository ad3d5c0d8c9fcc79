// The TSC clock (support/tsc_clock.hpp): the kernel's conversion formula, readings against
// clock_gettime, re-anchoring under a signal storm that interrupts it, and fork.
#include "support/tsc_clock.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <random>

#include "support/monotonic_clock.hpp"
#include "support/thread_signal_timer.hpp"

namespace userperf::support {
namespace {

constexpr std::uint64_t kBoundNs = 1000;  // the clock's promise: within 1 us of CLOCK_MONOTONIC

std::uint64_t mono() {
  return clock_gettime_ns(CLOCK_MONOTONIC);
}

// How far `t` lies outside [before, after] (0 inside).
std::uint64_t outside(std::uint64_t t, std::uint64_t before, std::uint64_t after) {
  if (t < before) return before - t;
  if (t > after) return t - after;
  return 0;
}

// The perf_event_mmap_page formula is floor(cyc * mult / 2^shift) + zero, computed in 64 bits.
TEST(TscToNs, IsTheKernelsFormulaExactly) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t cyc = rng() >> (rng() % 20);
    const auto mult = static_cast<std::uint32_t>(rng());
    const auto shift = static_cast<std::uint16_t>(rng() % 33);
    const std::uint64_t zero = rng();
    const auto wide =
        static_cast<std::uint64_t>((static_cast<unsigned __int128>(cyc) * mult) >> shift);
    ASSERT_EQ(tsc_to_ns(cyc, zero, mult, shift), zero + wide) << cyc << " " << mult << " " << shift;
  }
  EXPECT_EQ(tsc_to_ns(1000, 5, 1u << 31, 31), 1005u);
}

TEST(TscClock, ReadingsAreWithinTheBoundOfClockGettime) {
  std::uint64_t worst = 0;
  std::uint64_t last = 0;
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t before = mono();
    const std::uint64_t t = tsc_now();
    const std::uint64_t after = mono();
    worst = std::max(worst, outside(t, before, after));
    ASSERT_GE(t, last);
    last = t;
  }
  EXPECT_LE(worst, kBoundNs);
}

TEST(TscClock, MonotonicNsReadsTheSameClock) {
  const std::uint64_t a = tsc_now();
  const std::uint64_t b = monotonic_ns();
  const std::uint64_t c = tsc_now();
  EXPECT_LE(a, b);
  EXPECT_LE(b, c);
}

TEST(TscClock, ConversionReproducesAReading) {
  if (!tsc_clock_in_use()) GTEST_SKIP() << "no invariant TSC: tsc_now() is clock_gettime";
  TscConversion c;
  ASSERT_TRUE(tsc_conversion(c));
  EXPECT_NE(c.time_mult, 0u);
  EXPECT_LE(c.time_shift, 32u);
  EXPECT_NE(c.generation, 0u);
  // A reading between two converted TSC values lies between them (within the clamp of this
  // thread's last value, which only moves readings up to an earlier reading of the same line).
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(tsc_conversion(c));
    const std::uint64_t before = tsc_to_ns(read_tsc(), c.time_zero, c.time_mult, c.time_shift);
    const std::uint64_t t = tsc_now();
    const std::uint64_t after = tsc_to_ns(read_tsc(), c.time_zero, c.time_mult, c.time_shift);
    TscConversion again;
    ASSERT_TRUE(tsc_conversion(again));
    if (again.generation != c.generation) continue;  // re-anchored in between
    EXPECT_GE(t + 50, before);
    EXPECT_LE(t, after + 50);
  }
}

TEST(TscClock, ReanchorChangesTheGenerationAndNeverGoesBack) {
  if (!tsc_clock_in_use()) GTEST_SKIP() << "no invariant TSC";
  std::uint64_t last = tsc_now();
  const std::uint64_t first = tsc_generation();
  for (int i = 0; i < 2000; ++i) {
    ASSERT_TRUE(tsc_reanchor());
    const std::uint64_t before = mono();
    const std::uint64_t t = tsc_now();
    const std::uint64_t after = mono();
    ASSERT_GE(t, last);
    ASSERT_LE(outside(t, before, after), kBoundNs);
    last = t;
  }
  EXPECT_GE(tsc_generation(), first + 2000);
}

// A signal storm on a thread that re-anchors in a loop: handlers land inside the re-anchor
// (the lock held, the seqcount odd) and must neither wait nor read a torn line, nor go back.
std::atomic<bool> g_in_reanchor{false};
std::atomic<std::uint64_t> g_handler_last{0};  // the handlers' last reading
std::atomic<std::uint64_t> g_main_last{0};     // the interrupted loop's last reading
std::atomic<std::uint64_t> g_handler_calls{0};
std::atomic<std::uint64_t> g_handler_inside{0};
std::atomic<std::uint64_t> g_handler_worst{0};
std::atomic<std::uint64_t> g_handler_back{0};

void storm_handler(int) {
  // Every reading returned on this thread before this one began: the loop's, and earlier handlers'.
  const std::uint64_t earlier = std::max(g_main_last.load(std::memory_order_relaxed),
                                         g_handler_last.load(std::memory_order_relaxed));
  const std::uint64_t before = mono();
  const std::uint64_t t = tsc_now();
  const std::uint64_t after = mono();
  if (t < earlier) g_handler_back.fetch_add(1);
  g_handler_last.store(t, std::memory_order_relaxed);
  const std::uint64_t off = outside(t, before, after);
  if (off > g_handler_worst.load()) g_handler_worst.store(off);
  g_handler_calls.fetch_add(1);
  if (g_in_reanchor.load(std::memory_order_relaxed)) g_handler_inside.fetch_add(1);
}

TEST(TscClock, SignalHandlersInterruptingAReanchor) {
  if (!tsc_clock_in_use()) GTEST_SKIP() << "no invariant TSC";
  auto storm = std::make_unique<testing::ThreadSignalTimer>(SIGPROF, storm_handler, 20'000);
  ASSERT_TRUE(storm->ok());

  std::uint64_t back = 0;
  std::uint64_t worst = 0;
  const std::uint64_t end = mono() + 1'000'000'000;
  std::uint64_t reanchors = 0;
  while (mono() < end) {
    g_in_reanchor.store(true, std::memory_order_relaxed);
    reanchors += tsc_reanchor() ? 1 : 0;
    g_in_reanchor.store(false, std::memory_order_relaxed);
    // Never below what this loop or a handler on this thread returned before.
    const std::uint64_t earlier = std::max(g_main_last.load(std::memory_order_relaxed),
                                           g_handler_last.load(std::memory_order_relaxed));
    const std::uint64_t before = mono();
    const std::uint64_t t = tsc_now();
    const std::uint64_t after = mono();
    if (t < earlier) ++back;
    g_main_last.store(t, std::memory_order_relaxed);
    worst = std::max(worst, outside(t, before, after));
  }
  storm.reset();
  EXPECT_EQ(back, 0u);
  EXPECT_EQ(g_handler_back.load(), 0u);
  EXPECT_LE(worst, kBoundNs);
  EXPECT_LE(g_handler_worst.load(), kBoundNs);
  EXPECT_GT(reanchors, 1000u);
  EXPECT_GT(g_handler_calls.load(), 1000u);
  EXPECT_GT(g_handler_inside.load(), 100u) << "the storm must land inside re-anchors";
}

TEST(TscClock, WorksInAForkChild) {
  const bool in_use = tsc_clock_in_use();
  const std::uint64_t parent = tsc_now();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int bad = 0;
    std::uint64_t last = tsc_now();
    if (last < parent) bad |= 1;
    for (int i = 0; i < 100000; ++i) {
      if (in_use && (i % 1000) == 0 && !tsc_reanchor()) bad |= 2;
      const std::uint64_t before = mono();
      const std::uint64_t t = tsc_now();
      const std::uint64_t after = mono();
      if (t < last) bad |= 4;
      if (outside(t, before, after) > kBoundNs) bad |= 8;
      last = t;
    }
    _exit(bad);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace userperf::support
