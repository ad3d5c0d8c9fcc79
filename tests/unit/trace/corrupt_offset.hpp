// What the trace tests check of a decoder's result: the offset it found corrupt.
#pragma once

#include <cstdint>

#include "support/expected.hpp"

namespace userperf::trace {

// The offset a failed decode names; Error::kNoOffset when the decode succeeded, so a check of an
// offset fails on a decode that should have failed and did not.
inline std::uint64_t corrupt_offset(const Expected<void>& result) {
  return result ? Error::kNoOffset : result.error().offset;
}

}  // namespace userperf::trace
