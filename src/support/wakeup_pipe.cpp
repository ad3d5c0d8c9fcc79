#include "support/wakeup_pipe.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "support/descriptors.hpp"

namespace userperf::support {

WakeupPipe::~WakeupPipe() {
  if (read_ >= 0) close(read_);
  hang_up();
}

int WakeupPipe::open() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return -errno;
  read_ = place_descriptor(fds[0]);
  write_.store(place_descriptor(fds[1]), std::memory_order_release);
  return 0;
}

void WakeupPipe::wake() {
  const int fd = write_.load(std::memory_order_acquire);
  if (fd < 0) return;
  // A program may have closed the pipe with a raw system call and opened its own file at that
  // number: never write into it. Only registered descriptors are checked.
  if (owns_descriptor(fd) && !still_ours(fd)) {
    write_.store(-1, std::memory_order_release);
    return;
  }
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = write(fd, &byte, 1);
}

bool WakeupPipe::drain() {
  if (read_ < 0) return false;
  char buf[64];
  bool woke = false;
  while (read(read_, buf, sizeof buf) > 0) woke = true;
  return woke;
}

void WakeupPipe::hang_up() {
  const int fd = write_.exchange(-1);
  if (fd >= 0) close(fd);
}

}  // namespace userperf::support
