// A clang-compiled program filtering real task-clock samples: the timer signal's overflow path
// runs the program, which keeps samples only while the test's phase flag is set.
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <time.h>

#include <atomic>
#include <cstring>
#include <string>

#include "support/test_events.hpp"
#include "userperf/userperf.h"

namespace userperf::testing {
namespace {

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

volatile std::uint64_t g_phase = 0;

std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// Burns `ns` of this thread's CPU time (what task-clock counts), however loaded the machine is.
void spin_for(std::uint64_t ns) {
  const std::uint64_t end = thread_cpu_ns() + ns;
  volatile std::uint64_t sink = 0;
  while (thread_cpu_ns() < end) sink = sink + 1;
}

TEST(ClockFilter, ProgramKeepsOnlySamplesTakenInPhase) {
  const std::string path = std::string(USERPERF_BPF_OBJECT_DIR) + "/progs/handler_phase.bpf.o";
  char log[8192] = {};
  const int prog = userperf_bpf_prog_load(path.c_str(), "keep_in_phase", log, sizeof log);
  ASSERT_GE(prog, 0) << strerror(errno) << "\n" << log;
  const int config = userperf_bpf_map_fd(prog, "config");
  const int results = userperf_bpf_map_fd(prog, "results");
  const std::uint32_t zero = 0;
  const std::uint32_t one = 1;
  const std::uint64_t where = reinterpret_cast<std::uintptr_t>(&g_phase);
  ASSERT_EQ(userperf_bpf_map_update_elem(config, &zero, &where, BPF_ANY), 0);

  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = 1'000'000;  // 1 ms of this thread's CPU time
  attr.sample_type = PERF_SAMPLE_TIME;
  attr.disabled = 1;
  const int fd = userperf_perf_event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    MappedRing ring(fd, 16);
    ASSERT_TRUE(ring.ok());
    ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog)), 0);
    ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
    g_phase = 1;
    spin_for(100'000'000);
    g_phase = 0;
    const std::uint64_t phase_end = now_ns();
    spin_for(100'000'000);
    ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);

    std::uint64_t kept = 0;
    std::uint64_t dropped = 0;
    ASSERT_EQ(userperf_bpf_map_lookup_elem(results, &zero, &kept), 0);
    ASSERT_EQ(userperf_bpf_map_lookup_elem(results, &one, &dropped), 0);
    // 100 ms of CPU per phase: CPU-time timers fire on 4 ms ticks, so up to 25 samples each
    // (fewer on a loaded machine or under ASan, where 7 were seen); both phases must have some.
    EXPECT_GT(kept, 0u);
    EXPECT_GT(dropped, 0u);
    const auto records = ring.drain();
    EXPECT_EQ(records.size(), kept);
    for (const auto& rec : records) {
      ASSERT_EQ(record_type(rec), PERF_RECORD_SAMPLE);
      EXPECT_LE(field_at<std::uint64_t>(rec, 8), phase_end);  // taken while the phase was set
    }
  }
  userperf_close(fd);
  userperf_close(config);
  userperf_close(results);
  userperf_close(prog);
}

}  // namespace
}  // namespace userperf::testing
