// The calling thread's id, cached per thread (gettid once per thread; reset in a forked child).
#pragma once

#include <sys/types.h>

namespace userperf::pmu {

// SIGNAL-SAFE.
pid_t current_tid();
// The cached id, 0 when not known yet. In a vfork child it is still the parent thread's (the child
// runs on that thread's memory, and no fork handler ran): different from gettid(). SIGNAL-SAFE.
pid_t cached_tid();

}  // namespace userperf::pmu
