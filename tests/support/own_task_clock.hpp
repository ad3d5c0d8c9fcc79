// Runs a loaded BPF program (a C API program fd) as the overflow handler of the calling thread's
// own task-clock event, while the thread burns CPU: the end-to-end path of the bpf/perf tests
// (current task, cgroups, find_vma). A failure is reported as a gtest failure of the caller.
#pragma once

#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "support/current_task_seen.hpp"
#include "support/test_events.hpp"
#include "userperf/userperf.h"

namespace userperf::testing {

// One sample per 1 ms of this thread's CPU time, over `cpu_ns` of it.
inline void run_on_own_task_clock(int prog, std::uint64_t cpu_ns) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = 1'000'000;
  attr.sample_type = PERF_SAMPLE_IP;
  attr.disabled = 1;
  const int fd = userperf_perf_event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    MappedRing ring(fd, 16);
    ASSERT_TRUE(ring.ok());
    ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog)), 0)
        << strerror(errno);
    ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
    spin_thread_cpu(cpu_ns);
    ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
  }
  userperf_close(fd);
}

}  // namespace userperf::testing
