// The memory of one ring: a memfd holding a control page and 2^n data pages (or, for an AUX
// area, data pages only), mapped read-write for the producer. Another process maps the same memfd.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>

namespace userperf::ring {

std::size_t page_size();

// A zero-filled memfd of `length` bytes whose size is sealed (F_SEAL_SHRINK | F_SEAL_GROW |
// F_SEAL_SEAL): a process it is passed to can map it without the producer being able to shrink it
// under the mapping (a SIGBUS in the consumer). Returns the descriptor or a negative errno.
int create_ring_memfd(const char* name, std::size_t length);
// True when `fd`'s size can no longer shrink (what a consumer checks before trusting a mapping).
bool ring_memfd_size_sealed(int fd);

class RingMemory {
 public:
  RingMemory() = default;
  ~RingMemory();
  RingMemory(const RingMemory&) = delete;
  RingMemory& operator=(const RingMemory&) = delete;

  // Creates the memfd and the producer's mapping: 1 control page + data_pages pages, zero-filled.
  // data_pages must be 0 or a power of two. Returns 0 or a negative errno.
  int create(std::size_t data_pages, const char* name);

  int fd() const { return fd_; }
  std::size_t length() const { return length_; }
  perf_event_mmap_page* control() const { return static_cast<perf_event_mmap_page*>(base_); }
  std::uint8_t* data() const { return static_cast<std::uint8_t*>(base_) + page_size(); }
  std::uint64_t data_size() const { return length_ - page_size(); }

 private:
  int fd_ = -1;
  void* base_ = nullptr;
  std::size_t length_ = 0;
};

// Maps a ring memfd for a consumer the way the kernel does: the control page is writable only when
// `writable` (PROT_WRITE was asked for), data pages are always read-only. addr is a hint or, with
// MAP_FIXED in `flags`, an exact place. Returns the mapping or MAP_FAILED with errno set.
void* map_for_consumer(void* addr, std::size_t length, bool writable, int flags, int memfd);

}  // namespace userperf::ring
