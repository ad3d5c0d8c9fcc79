// attr.inherit through the C API with real threads: libuserperf's pthread_create hook
// (api/thread_interpose.cpp) clones a task-clock event for each thread created after it was
// opened; reads of the original include the thread while it runs and after it ended.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include "userperf/userperf.h"

namespace {

constexpr std::uint64_t kPeriodNs = 1'000'000;
constexpr std::uint64_t kSpinNs = 80'000'000;

std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

void spin(std::uint64_t ns) {
  const std::uint64_t end = thread_cpu_ns() + ns;
  while (thread_cpu_ns() < end) {
  }
}

int open_task_clock(bool inherit, bool disabled = false) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = kPeriodNs;
  attr.inherit = inherit ? 1 : 0;
  attr.disabled = disabled ? 1 : 0;
  return userperf_perf_event_open(&attr, 0, -1, -1, 0);
}

std::uint64_t read_count(int fd) {
  std::uint64_t v = 0;
  EXPECT_EQ(userperf_read(fd, &v, sizeof v), 8);
  return v;
}

TEST(InheritThreads, CountsAThreadCreatedAfterOpenWhileLiveAndAfterExit) {
  const int fd = open_task_clock(true);
  ASSERT_GE(fd, 0);
  std::atomic<int> stage{0};
  std::thread worker([&] {
    spin(kSpinNs);
    stage.store(1);
    while (stage.load() != 2) usleep(1000);
  });
  while (stage.load() != 1) usleep(1000);
  usleep(20000);  // the worker's last ticks land
  const std::uint64_t live = read_count(fd);
  EXPECT_GE(live, kSpinNs / 2) << "the live thread's clone is in the read";
  stage.store(2);
  worker.join();
  const std::uint64_t after = read_count(fd);
  EXPECT_GE(after, live) << "the exited thread's count is folded into the original";
  userperf_close(fd);
}

TEST(InheritThreads, WithoutInheritTheThreadIsNotCounted) {
  const int fd = open_task_clock(false);
  ASSERT_GE(fd, 0);
  std::thread worker([] { spin(kSpinNs); });
  worker.join();
  EXPECT_LT(read_count(fd), kSpinNs / 4);
  userperf_close(fd);
}

TEST(InheritThreads, DisabledOriginalDisablesTheThreads) {
  const int fd = open_task_clock(true);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
  const std::uint64_t before = read_count(fd);
  std::thread worker([] { spin(kSpinNs); });
  worker.join();
  EXPECT_LT(read_count(fd) - before, kSpinNs / 4);
  userperf_close(fd);
}

}  // namespace
