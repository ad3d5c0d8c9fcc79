// Zeroed, page-backed storage for map values, allocated once at create. Anonymous mmap keeps
// large maps lazy (untouched pages cost nothing, as the kernel's vmalloc'd arrays cost their
// pages) and reports exhaustion as ENOMEM rather than an exception.
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
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace userperf::bpf
