// The C API: each call forwards to the engine and turns a negative errno into -1 + errno.
#include <sys/mman.h>

#include <cerrno>

#include "api/engine_instance.hpp"
#include "bpf/perf/bpf_registry.hpp"
#include "core/engine.hpp"
#include "support/expected.hpp"
#include "userperf/userperf.h"

namespace {

using userperf::syscall_return;
using userperf::api::bpf_registry;
using userperf::api::engine;

}  // namespace

extern "C" {

int userperf_perf_event_open(struct perf_event_attr* attr, pid_t pid, int cpu, int group_fd,
                             unsigned long flags) {
  return syscall_return(engine().open(attr, pid, cpu, group_fd, flags));
}

int userperf_ioctl(int fd, unsigned long request, unsigned long arg) {
  return syscall_return(engine().ioctl(fd, request, arg));
}

void* userperf_mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  void* p = engine().mmap(addr, length, prot, flags, fd, offset);
  if (userperf::is_err(p)) {
    errno = -userperf::ptr_err(p);
    return MAP_FAILED;
  }
  return p;
}

int userperf_munmap(void* addr, size_t length) {
  return syscall_return(engine().munmap(addr, length));
}

ssize_t userperf_read(int fd, void* buf, size_t count) {
  return syscall_return(engine().read(fd, buf, count));
}

int userperf_close(int fd) {
  int rc = engine().close(fd);
  if (rc == -EBADF) rc = bpf_registry().close(fd);
  return syscall_return(rc);
}

int userperf_poll(struct pollfd* fds, nfds_t nfds, int timeout_ms) {
  return syscall_return(engine().poll(fds, nfds, timeout_ms));
}

int userperf_pmu_type(const char* name) {
  return syscall_return(engine().pmu_type(name));
}

int userperf_event_wakeup_fd(int fd) {
  return syscall_return(engine().wakeup_fd(fd));
}

int userperf_event_ring_fd(int fd) {
  return syscall_return(engine().ring_fd(fd));
}

int userperf_event_aux_fd(int fd) {
  return syscall_return(engine().aux_fd(fd));
}

ssize_t userperf_aux_snapshot(int fd, void* buf, size_t len, uint64_t* head_out) {
  return syscall_return(engine().aux_snapshot(fd, buf, len, head_out));
}

}  // extern "C"
