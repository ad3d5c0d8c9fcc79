// The hash of keys and stack traces: 8-byte words mixed by multiplication, finished with
// MurmurHash3's 64-bit avalanche. Seeded per map (the kernel's hashrnd) unless BPF_F_ZERO_SEED.
// Values differ from the kernel's jhash: bucket order and stack ids are not ABI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace userperf::bpf {

inline std::uint32_t hash_bytes(const void* data, std::size_t size, std::uint64_t seed) {
  constexpr std::uint64_t kMultiplier = 0x9e3779b97f4a7c15ull;
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  std::uint64_t h = seed ^ (size * kMultiplier);
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, bytes + i, 8);
    h = (h ^ word) * kMultiplier;
    h ^= h >> 29;
  }
  if (i < size) {
    std::uint64_t word = 0;
    std::memcpy(&word, bytes + i, size - i);
    h = (h ^ word) * kMultiplier;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return static_cast<std::uint32_t>(h);
}

}  // namespace userperf::bpf
