// CLOCK_MONOTONIC in nanoseconds: the time base of the recorder's messages and synthesized records
// and of the clock ticker's deadlines.
//
// It reads the TSC clock (tsc_clock.hpp), the clock of sample TIMEs (core::Event::clock_now for
// the default clock and CLOCK_MONOTONIC), rather than clock_gettime: the agent's messages (a
// thread's start, a fork, an exec) and the samples of the same thread then come from one clock
// whose readings never decrease on a thread, so a record synthesized from a message is never
// stamped after a sample the thread wrote later. Where the TSC clock is not used it is
// clock_gettime(CLOCK_MONOTONIC) itself, and where it is used it stays within 1 us of it, so a
// process that compares it with another process's clock_gettime (the recorder's ticker stamps)
// is off by no more than that. SIGNAL-SAFE.
#pragma once

#include <cstdint>

#include "support/tsc_clock.hpp"

namespace userperf::support {

inline std::uint64_t monotonic_ns() {
  return tsc_now();
}

}  // namespace userperf::support
