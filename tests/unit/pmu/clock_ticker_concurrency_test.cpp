// The ticker thread signals while other threads arm, re-arm (ticker <-> CPU-time timer), disarm
// and close their clocks: no sample after close, and (under TSan) no data race between the
// ticker, the signal handler and the control path.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include "clock_test_support.hpp"

namespace userperf {
namespace {

using testing::kMillisecond;

std::uint64_t ring_head(const testing::MappedRing& ring) {
  return __atomic_load_n(&ring.control()->data_head, __ATOMIC_ACQUIRE);
}

// Returns the number of rounds in which a sample was written after close.
int open_sample_close(int rounds) {
  int late = 0;
  for (int round = 0; round < rounds; ++round) {
    perf_event_attr attr = testing::ticker_clock_attr(
        round % 2 ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_SW_CPU_CLOCK, 200'000);
    const int fd = testing::event_open(&attr, 0, -1, -1, 0);
    EXPECT_GE(fd, 0) << strerror(errno);
    if (fd < 0) return late;
    testing::MappedRing ring(fd, 8);
    testing::burn_cpu_ns(2 * kMillisecond);
    if (round % 3 == 1) {
      // To the CPU-time timer and back: the slot leaves the ticker while it may be signalling.
      std::uint64_t period = 20 * kMillisecond;
      EXPECT_EQ(
          testing::event_ioctl(fd, PERF_EVENT_IOC_PERIOD, reinterpret_cast<unsigned long>(&period)),
          0);
      testing::burn_cpu_ns(kMillisecond);
      period = 100'000;
      EXPECT_EQ(
          testing::event_ioctl(fd, PERF_EVENT_IOC_PERIOD, reinterpret_cast<unsigned long>(&period)),
          0);
      testing::burn_cpu_ns(kMillisecond);
    }
    if (round % 3 == 2) {
      EXPECT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
      EXPECT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
      testing::burn_cpu_ns(kMillisecond);
    }
    EXPECT_EQ(testing::event_close(fd), 0);
    const std::uint64_t head = ring_head(ring);
    testing::burn_cpu_ns(2 * kMillisecond);
    if (ring_head(ring) != head) ++late;
  }
  return late;
}

TEST(ClockTickerConcurrency, CloseWhileTheTickerSignals) {
  std::atomic<int> late{0};
  std::thread threads[3];
  for (auto& t : threads) t = std::thread([&late] { late += open_sample_close(30); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(late.load(), 0) << "samples written after close";
}

}  // namespace
}  // namespace userperf
