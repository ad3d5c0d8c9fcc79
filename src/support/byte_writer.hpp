// ByteWriter: appends plain values to a byte vector: records built in memory (synthesized COMM and
// MMAP2, perf.data feature bodies, encoded images). The one place such appends are written. Not for
// the signal path (it allocates); records written there go through ring::OutputHandle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace userperf::support {

class ByteWriter {
 public:
  // Appends to `out`, which must outlive the writer.
  explicit ByteWriter(std::vector<std::uint8_t>& out) : out_(out) {}

  template <class T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    put_bytes(&value, sizeof value);
  }

  void put_bytes(const void* bytes, std::size_t size) {
    const std::size_t at = out_.size();
    out_.resize(at + size);
    if (size != 0) std::memcpy(out_.data() + at, bytes, size);
  }

  void put_zeros(std::size_t size) { out_.resize(out_.size() + size, 0); }

  // Pads with zeros to a multiple of `alignment` bytes.
  void align(std::size_t alignment) {
    put_zeros((alignment - out_.size() % alignment) % alignment);
  }

  // Overwrites a value already written at byte `at` (a size known only at the end).
  template <class T>
  void patch(std::size_t at, const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::memcpy(out_.data() + at, &value, sizeof value);
  }

  std::size_t size() const { return out_.size(); }

 private:
  std::vector<std::uint8_t>& out_;
};

}  // namespace userperf::support
