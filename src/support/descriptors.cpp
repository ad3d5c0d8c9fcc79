#include "support/descriptors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace userperf::support {
namespace {

// Descriptors past this are never placed (the floor is at most 4096; a program with tens of
// thousands of descriptors open gets userperf's where the kernel puts them, unregistered).
constexpr int kTracked = 1 << 14;

std::atomic<int> g_floor{0};
// Per descriptor number: its identity while userperf owns it, 0 otherwise. dev << 40 ^ ino: a
// descriptor is told from another open file, not identified across file systems exactly.
std::atomic<std::uint64_t> g_identity[kTracked];

std::uint64_t identity_of(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return 0;
  const std::uint64_t id =
      static_cast<std::uint64_t>(st.st_dev) << 40 ^ static_cast<std::uint64_t>(st.st_ino);
  return id != 0 ? id : 1;
}

}  // namespace

void set_descriptor_floor(int floor) {
  g_floor.store(std::clamp(floor, 0, kTracked - 1), std::memory_order_release);
}

int descriptor_floor() {
  return g_floor.load(std::memory_order_acquire);
}

int descriptor_floor_for(unsigned long soft_limit) {
  if (soft_limit < 64) return 0;
  return static_cast<int>(std::min<unsigned long>(soft_limit / 2, 4096));
}

int place_descriptor(int fd) {
  const int floor = descriptor_floor();
  if (fd < 0 || floor == 0) return fd;
  if (fd < floor) {
    const int high = fcntl(fd, F_DUPFD_CLOEXEC, floor);
    if (high < 0) return fd;  // no free slot above the floor: keep it where the kernel put it
    close(fd);
    fd = high;
  }
  if (fd < kTracked) g_identity[fd].store(identity_of(fd), std::memory_order_release);
  return fd;
}

bool owns_descriptor(int fd) {
  return fd >= 0 && fd < kTracked && g_identity[fd].load(std::memory_order_acquire) != 0;
}

void release_descriptor(int fd) {
  if (fd >= 0 && fd < kTracked) g_identity[fd].store(0, std::memory_order_release);
}

bool still_ours(int fd) {
  if (fd < 0 || fd >= kTracked) return false;
  const std::uint64_t id = g_identity[fd].load(std::memory_order_acquire);
  return id != 0 && identity_of(fd) == id;
}

int next_owned_descriptor(unsigned from, unsigned to) {
  const unsigned last = std::min<unsigned>(to, kTracked - 1);
  for (unsigned fd = from; fd <= last; ++fd) {
    if (g_identity[fd].load(std::memory_order_relaxed) != 0) return static_cast<int>(fd);
  }
  return -1;
}

}  // namespace userperf::support
