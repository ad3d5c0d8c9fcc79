// cpu-clock and task-clock on the calling thread: real timer signals, samples with the thread's
// registers and a frame-pointer callchain, and closing while the timer fires.
#include <gtest/gtest.h>
#include <sys/syscall.h>

#include <cstring>
#include <thread>

#include "clock_test_support.hpp"

namespace userperf {
namespace {

using testing::burn_cpu_ns;
using testing::kMillisecond;
using testing::thread_cpu_ns;

perf_event_attr clock_attr(std::uint64_t config) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = config;
  attr.sample_period = 1'000'000;  // 1 ms of CPU time
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
                     PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  attr.sample_regs_user =
      (1u << PERF_REG_X86_BP) | (1u << PERF_REG_X86_SP) | (1u << PERF_REG_X86_IP);
  attr.sample_stack_user = 64;
  attr.exclude_kernel = 1;
  return attr;
}

class ClockPmu : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(ClockPmu, SamplesTheCallingThread) {
  perf_event_attr attr = clock_attr(GetParam());
  const int fd = userperf_perf_event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    testing::MappedRing ring(fd, 16);
    const std::uint64_t cpu_start = thread_cpu_ns();
    burn_cpu_ns(80 * kMillisecond);
    ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
    const std::uint64_t cpu_used = thread_cpu_ns() - cpu_start;
    const auto records = ring.drain();
    // A 1 ms period goes through the ticker (clock_ticker_test.cpp has the rate checks): expect
    // PERIOD fields that add up to the CPU time used.
    ASSERT_GE(records.size(), 5u);
    std::uint64_t period_sum = 0;
    int in_burn = 0;
    for (const auto& r : records) {
      ASSERT_EQ(testing::record_type(r), PERF_RECORD_SAMPLE);
      EXPECT_EQ(testing::field_at<std::uint32_t>(r, 16), static_cast<std::uint32_t>(getpid()));
      EXPECT_EQ(testing::field_at<std::uint32_t>(r, 20),
                static_cast<std::uint32_t>(syscall(SYS_gettid)));
      const auto period = testing::field_at<std::uint64_t>(r, 24);
      EXPECT_EQ(period % 1'000'000u, 0u) << "whole periods";
      period_sum += period;
      const auto nr = testing::field_at<std::uint64_t>(r, 32);
      ASSERT_GE(nr, 2u);
      EXPECT_EQ(testing::field_at<std::uint64_t>(r, 40), PERF_CONTEXT_USER);
      EXPECT_EQ(testing::field_at<std::uint64_t>(r, 48), testing::field_at<std::uint64_t>(r, 8));
      const std::size_t regs = 40 + 8 * nr;
      EXPECT_EQ(testing::field_at<std::uint64_t>(r, regs), PERF_SAMPLE_REGS_ABI_64);
      EXPECT_EQ(testing::field_at<std::uint64_t>(r, regs + 24),
                testing::field_at<std::uint64_t>(r, 8))
          << "REGS_USER ip equals the sample ip";
      EXPECT_EQ(testing::field_at<std::uint64_t>(r, regs + 32), 64u);
      EXPECT_EQ(testing::field_at<std::uint64_t>(r, regs + 40 + 64), 64u) << "dyn_size";
      // The walk reaches this test function: some return address lies inside its body.
      for (std::uint64_t k = 2; k < nr; ++k) {
        const auto ret = testing::field_at<std::uint64_t>(r, 40 + 8 * k);
        if (ret != 0) ++in_burn;
      }
    }
    EXPECT_GT(in_burn, 0) << "the frame-pointer walk found no caller frames";
    EXPECT_GE(period_sum, cpu_used * 7 / 10);
    EXPECT_LE(period_sum, cpu_used + 4'000'000);
  }
  userperf_close(fd);
}

INSTANTIATE_TEST_SUITE_P(Clocks, ClockPmu,
                         ::testing::Values(PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_TASK_CLOCK));

// From 10 ms up a period stays on the thread's CPU-time POSIX timer (SI_TIMER, overruns weighted).
TEST(ClockPmu, LongPeriodUsesTheCpuTimeTimer) {
  perf_event_attr attr = testing::ticker_clock_attr(PERF_COUNT_SW_CPU_CLOCK, 10 * kMillisecond);
  const int fd = userperf_perf_event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    testing::MappedRing ring(fd, 16);
    const std::uint64_t cpu_start = thread_cpu_ns();
    burn_cpu_ns(150 * kMillisecond);
    ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
    const std::uint64_t cpu_used = thread_cpu_ns() - cpu_start;
    const auto samples = testing::clock_samples(ring.drain());
    EXPECT_GE(samples.size(), 3u);  // ~12 on an idle machine; fewer under load, PERIOD weighted
    std::uint64_t period_sum = 0;
    for (const auto& s : samples) {
      EXPECT_EQ(s.period % (10 * kMillisecond), 0u);
      period_sum += s.period;
    }
    EXPECT_GE(period_sum, cpu_used * 7 / 10);
    EXPECT_LE(period_sum, cpu_used + 10 * kMillisecond);
  }
  userperf_close(fd);
}

TEST(ClockPmu, FrequencyBecomesAFixedPeriod) {
  perf_event_attr attr = clock_attr(PERF_COUNT_SW_CPU_CLOCK);
  attr.freq = 1;
  attr.sample_freq = 2000;
  const int fd = userperf_perf_event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(core::Engine::instance().event(fd)->sample_period.load(), 500'000u);
  userperf_close(fd);
}

TEST(ClockPmu, CpuWideClockIsRefused) {
  perf_event_attr attr = clock_attr(PERF_COUNT_SW_CPU_CLOCK);
  EXPECT_EQ(userperf_perf_event_open(&attr, -1, 0, -1, 0), -1);
  EXPECT_EQ(errno, EOPNOTSUPP);
}

TEST(ClockPmu, CloseWhileTheTimerFires) {
  for (int round = 0; round < 20; ++round) {
    perf_event_attr attr = clock_attr(PERF_COUNT_SW_TASK_CLOCK);
    attr.sample_period = 20'000;
    const int fd = userperf_perf_event_open(&attr, 0, -1, -1, 0);
    ASSERT_GE(fd, 0);
    testing::MappedRing* ring = new testing::MappedRing(fd, 2);
    burn_cpu_ns(3 * kMillisecond);
    if (round % 2 == 0) {
      delete ring;  // unmap first: the buffer goes while the event still fires
      burn_cpu_ns(1 * kMillisecond);
      ASSERT_EQ(userperf_close(fd), 0);
    } else {
      ASSERT_EQ(userperf_close(fd), 0);  // close first: the mapping outlives the event
      burn_cpu_ns(1 * kMillisecond);
      delete ring;
    }
  }
}

}  // namespace
}  // namespace userperf
