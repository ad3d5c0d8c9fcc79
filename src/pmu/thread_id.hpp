// The calling thread's id, cached per thread (gettid once per thread; reset in a forked child).
#pragma once

#include <sys/types.h>

namespace userperf::pmu {

// SIGNAL-SAFE.
pid_t current_tid();

}  // namespace userperf::pmu
