// Memory fenced by PROT_NONE guard pages on both sides, for runs of BPF programs whose accesses
// must stay inside their regions: an access that escaped the interpreter's checks (or unchecked
// JIT code's) lands in a guard page and raises SIGSEGV instead of silently reading a neighbour.
// The usable bytes sit at the END of their pages (`at_end`, the default), so that the first byte
// past them is already a guard page; the front guard catches underflows past the first page.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include "bpf/isa/memory_region.hpp"

namespace userperf::testing {

class GuardedPages {
 public:
  // `bytes` usable bytes (rounded up to whole pages when `at_end` is false).
  explicit GuardedPages(std::size_t bytes, bool at_end = true) {
    page_ = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t pages = (bytes + page_ - 1) / page_ + (bytes == 0 ? 1 : 0);
    mapped_ = (pages + 2) * page_;
    void* p = mmap(nullptr, mapped_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    base_ = static_cast<std::uint8_t*>(p);
    if (mprotect(base_ + page_, pages * page_, PROT_READ | PROT_WRITE) != 0) {
      munmap(base_, mapped_);
      base_ = nullptr;
      return;
    }
    size_ = at_end ? bytes : pages * page_;
    data_ = base_ + page_ + (at_end ? pages * page_ - bytes : 0);
  }
  ~GuardedPages() {
    if (base_ != nullptr) munmap(base_, mapped_);
  }
  GuardedPages(const GuardedPages&) = delete;
  GuardedPages& operator=(const GuardedPages&) = delete;

  bool ok() const { return base_ != nullptr; }
  std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }
  // The usable pages become read-only (a write then faults as well).
  void make_read_only() { mprotect(base_ + page_, mapped_ - 2 * page_, PROT_READ); }
  void make_writable() { mprotect(base_ + page_, mapped_ - 2 * page_, PROT_READ | PROT_WRITE); }
  bpf::MemoryRegion region(bool writable) const {
    const auto begin = reinterpret_cast<std::uintptr_t>(data_);
    return {begin, begin + size_, writable};
  }
  // True when `addr` is in one of the two guard pages.
  bool in_guard(std::uintptr_t addr) const {
    const auto base = reinterpret_cast<std::uintptr_t>(base_);
    return base_ != nullptr && ((addr >= base && addr < base + page_) ||
                                (addr >= base + mapped_ - page_ && addr < base + mapped_));
  }

 private:
  std::uint8_t* base_ = nullptr;
  std::uint8_t* data_ = nullptr;
  std::size_t page_ = 0;
  std::size_t mapped_ = 0;
  std::size_t size_ = 0;
};

}  // namespace userperf::testing
