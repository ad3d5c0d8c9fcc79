// The engine-level definitions of engine_under_test.hpp's system calls (core and pmu flavours):
// the engine's answers (-errno) with the C API's conventions (-1 and errno, MAP_FAILED).
#include <sys/mman.h>

#include <cerrno>

#include "support/engine_under_test.hpp"
#include "support/expected.hpp"

namespace userperf::testing {

int event_open(perf_event_attr* attr, pid_t pid, int cpu, int group_fd, unsigned long flags) {
  return syscall_return(engine().open(attr, pid, cpu, group_fd, flags));
}
int event_ioctl(int fd, unsigned long request, unsigned long arg) {
  return syscall_return(engine().ioctl(fd, request, arg));
}
void* event_mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
  void* p = engine().mmap(addr, length, prot, flags, fd, offset);
  if (!is_err(p)) return p;
  errno = -ptr_err(p);
  return MAP_FAILED;
}
int event_munmap(void* addr, std::size_t length) {
  return syscall_return(engine().munmap(addr, length));
}
ssize_t event_read(int fd, void* buf, std::size_t count) {
  return syscall_return(engine().read(fd, buf, count));
}
int event_close(int fd) {
  return syscall_return(engine().close(fd));
}
int event_poll(pollfd* fds, nfds_t nfds, int timeout_ms) {
  return syscall_return(engine().poll(fds, nfds, timeout_ms));
}
int event_wakeup_fd(int fd) {
  return syscall_return(engine().wakeup_fd(fd));
}
int event_ring_fd(int fd) {
  return syscall_return(engine().ring_fd(fd));
}
int event_aux_fd(int fd) {
  return syscall_return(engine().aux_fd(fd));
}
ssize_t event_aux_snapshot(int fd, void* buf, std::size_t len, std::uint64_t* head_out) {
  return syscall_return(engine().aux_snapshot(fd, buf, len, head_out));
}

}  // namespace userperf::testing
