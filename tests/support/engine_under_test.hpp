// The engine a test drives, and its system-call surface with the C API's conventions (-1 and
// errno, MAP_FAILED). One definition per test executable, at its module's level:
//   core (unit_core, concurrency_core): engine_under_test_core.cpp, an engine of their own with the
//     test PMUs, nothing above core;
//   pmu (unit_pmu, concurrency_pmu): engine_under_test_pmu.cpp, an engine of their own with the
//     built-in PMUs and the test PMUs, nothing of api;
//   both with engine_of_level.cpp (what the two share) and engine_under_test_syscalls.cpp;
//   every other test and the benchmarks: engine_under_test_api.cpp, the C API's process-wide
//     engine with the test PMUs added at first use, each call the userperf_* one.
#pragma once

#include <linux/perf_event.h>
#include <poll.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "core/engine.hpp"

namespace userperf::testing {

core::Engine& engine();
int test_pmu_type();      // TestPmu, "test"
int test_aux_pmu_type();  // TestAuxPmu, "test_aux"

int event_open(perf_event_attr* attr, pid_t pid, int cpu, int group_fd, unsigned long flags);
int event_ioctl(int fd, unsigned long request, unsigned long arg);
void* event_mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset);
int event_munmap(void* addr, std::size_t length);
ssize_t event_read(int fd, void* buf, std::size_t count);
int event_close(int fd);
int event_poll(pollfd* fds, nfds_t nfds, int timeout_ms);
int event_wakeup_fd(int fd);
int event_ring_fd(int fd);
int event_aux_fd(int fd);
ssize_t event_aux_snapshot(int fd, void* buf, std::size_t len, std::uint64_t* head_out);

}  // namespace userperf::testing
