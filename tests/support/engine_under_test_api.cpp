// The api-level engine under test: the C API's, each call the userperf_* one.
#include "support/engine_under_test.hpp"

#include "api/engine_instance.hpp"
#include "support/pmu/test_aux_pmu.hpp"
#include "support/pmu/test_pmu.hpp"
#include "userperf/userperf.h"

namespace userperf::testing {

core::Engine& engine() {
  return api::engine();
}

int test_pmu_type() {
  // Leaked, as the built-in PMUs are: events may outlive any scope.
  static const int type = engine().register_pmu(*new TestPmu());
  return type;
}

int test_aux_pmu_type() {
  static const int type = engine().register_pmu(*new TestAuxPmu(engine()));
  return type;
}

int event_open(perf_event_attr* attr, pid_t pid, int cpu, int group_fd, unsigned long flags) {
  return userperf_perf_event_open(attr, pid, cpu, group_fd, flags);
}
int event_ioctl(int fd, unsigned long request, unsigned long arg) {
  return userperf_ioctl(fd, request, arg);
}
void* event_mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
  return userperf_mmap(addr, length, prot, flags, fd, offset);
}
int event_munmap(void* addr, std::size_t length) {
  return userperf_munmap(addr, length);
}
ssize_t event_read(int fd, void* buf, std::size_t count) {
  return userperf_read(fd, buf, count);
}
int event_close(int fd) {
  return userperf_close(fd);
}
int event_poll(pollfd* fds, nfds_t nfds, int timeout_ms) {
  return userperf_poll(fds, nfds, timeout_ms);
}
int event_wakeup_fd(int fd) {
  return userperf_event_wakeup_fd(fd);
}
int event_ring_fd(int fd) {
  return userperf_event_ring_fd(fd);
}
int event_aux_fd(int fd) {
  return userperf_event_aux_fd(fd);
}
ssize_t event_aux_snapshot(int fd, void* buf, std::size_t len, std::uint64_t* head_out) {
  return userperf_aux_snapshot(fd, buf, len, head_out);
}

}  // namespace userperf::testing
