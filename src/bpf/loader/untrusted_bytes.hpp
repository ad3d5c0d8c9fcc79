// Reads from the bytes of an object file that nobody has vouched for yet, shared by the loader's
// checks (elf_check, btf_check) and its readers: a range test that cannot overflow, and a copy of a
// value at an offset that may be unaligned.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

namespace userperf::bpf::loader {

// `offset + size <= limit` without overflow.
constexpr bool fits(std::uint64_t offset, std::uint64_t size, std::uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

// The T at `offset`, which the caller has checked with fits(); it may be unaligned.
template <class T>
T read_at(std::span<const std::uint8_t> bytes, std::uint64_t offset) {
  static_assert(std::is_trivially_copyable_v<T>);
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

}  // namespace userperf::bpf::loader
