// CLOCK_MONOTONIC in nanoseconds: the time base of the recorder's messages and synthesized records
// and of the clock ticker's deadlines. Header-only (a vDSO call).
#pragma once

#include <time.h>

#include <cstdint>

namespace userperf::support {

inline std::uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace userperf::support
