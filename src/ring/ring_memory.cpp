#include "ring/ring_memory.hpp"

#include <fcntl.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include "support/descriptors.hpp"

namespace userperf::ring {

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

RingMemory::~RingMemory() {
  if (base_ != nullptr) munmap(base_, length_);
  if (fd_ >= 0) close(fd_);
}

int create_ring_memfd(const char* name, std::size_t length) {
  const int fd = support::place_descriptor(memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (fd < 0) return -errno;
  if (ftruncate(fd, static_cast<off_t>(length)) != 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    const int err = errno;
    close(fd);
    return -err;
  }
  return fd;
}

bool ring_memfd_size_sealed(int fd) {
  const int seals = fcntl(fd, F_GET_SEALS);
  return seals >= 0 && (seals & F_SEAL_SHRINK) != 0;
}

int RingMemory::create(std::size_t data_pages, const char* name) {
  if (data_pages != 0 && (data_pages & (data_pages - 1)) != 0) return -EINVAL;
  const std::size_t length = (data_pages + 1) * page_size();
  const int fd = create_ring_memfd(name, length);
  if (fd < 0) return fd;
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const int err = errno;
    close(fd);
    return err == ENOMEM ? -ENOMEM : -err;
  }
  fd_ = fd;
  base_ = base;
  length_ = length;
  return 0;
}

void* map_for_consumer(void* addr, std::size_t length, bool writable, int flags, int memfd) {
  const int map_flags = MAP_SHARED | (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE | MAP_POPULATE));
  void* base = mmap(addr, length, PROT_READ, map_flags, memfd, 0);
  if (base == MAP_FAILED || !writable) return base;
  // Only the control page takes stores, as in the kernel (a store into data pages faults).
  if (mprotect(base, page_size(), PROT_READ | PROT_WRITE) != 0) {
    const int err = errno;
    munmap(base, length);
    errno = err;
    return MAP_FAILED;
  }
  return base;
}

}  // namespace userperf::ring
