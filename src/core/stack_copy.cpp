// SIGNAL-SAFE: see stack_copy.hpp.
#include "core/stack_copy.hpp"

#include <cstdint>
#include <cstring>

namespace userperf::core {

// Volatile loads keep the compiler from turning the loop back into a memcpy call, which ASan
// intercepts and checks.
__attribute__((no_sanitize("address"))) std::size_t copy_stack_bytes(void* dst, const void* src,
                                                                     std::size_t offset,
                                                                     std::size_t len) {
  const auto* from = static_cast<const volatile std::uint8_t*>(src) + offset;
  auto* to = static_cast<std::uint8_t*>(dst);
  std::size_t i = 0;
  for (; i + sizeof(std::uint64_t) <= len; i += sizeof(std::uint64_t)) {
    const std::uint64_t word = *reinterpret_cast<const volatile std::uint64_t*>(from + i);
    std::memcpy(to + i, &word, sizeof word);
  }
  for (; i < len; ++i) to[i] = from[i];
  return 0;
}

}  // namespace userperf::core
