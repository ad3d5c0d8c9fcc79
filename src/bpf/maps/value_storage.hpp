// Zeroed, page-backed storage for map values, allocated once at create. Anonymous mmap keeps
// large maps lazy (untouched pages cost nothing, as the kernel's vmalloc'd arrays cost their
// pages) and reports exhaustion as ENOMEM rather than an exception.
//
// The storage lies between two PROT_NONE guard pages, flush against the second one (its start
// 8-byte aligned): an access past the end of a map, which the verifier promises never happens,
// faults at once instead of reading or writing the next mapping (the kernel's vmalloc'd maps end
// at a guard page too). The soundness campaign relies on it: its maps' values end at a guard.
#pragma once

#include <cstddef>
#include <cstdint>

#include "bpf/isa/memory_region.hpp"
#include "support/expected.hpp"

namespace userperf::bpf {

class ValueStorage {
 public:
  ValueStorage() = default;
  // `size` in bytes; 0 gives empty storage. ENOMEM when the size overflows or mmap fails.
  static Expected<ValueStorage> allocate(std::uint64_t size);
  ~ValueStorage();
  ValueStorage(ValueStorage&& other) noexcept;
  ValueStorage& operator=(ValueStorage&& other) noexcept;
  ValueStorage(const ValueStorage&) = delete;
  ValueStorage& operator=(const ValueStorage&) = delete;

  std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }
  MemoryRegion region(bool writable) const;

 private:
  void release();
  std::uint8_t* mapping_ = nullptr;  // the whole mapping, guard pages included
  std::size_t mapped_ = 0;
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace userperf::bpf
