// Little-endian 8-byte units, the grain of every userperf trace format, and the mixing function the
// formats use for check bits.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>

namespace userperf::trace {

static_assert(std::endian::native == std::endian::little, "trace formats are little-endian");

constexpr std::size_t kUnitBytes = 8;

// The unit at byte `offset` of `bytes`; the caller checks offset + 8 <= size.
inline std::uint64_t load_unit(std::span<const std::uint8_t> bytes, std::size_t offset) {
  std::uint64_t unit;
  std::memcpy(&unit, bytes.data() + offset, sizeof unit);
  return unit;
}

inline void store_unit(std::uint8_t* out, std::uint64_t unit) {
  std::memcpy(out, &unit, sizeof unit);
}

// splitmix64's output function: a bijective mix of all 64 bits.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

}  // namespace userperf::trace
