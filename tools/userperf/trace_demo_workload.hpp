// The instrumented workload of `userperf trace-demo` (see trace_demo_workload.cpp).
#pragma once

#include <cstdint>

extern "C" {
// Runs the fixed call tree for `ms` milliseconds of this thread's CPU time.
void trace_demo_run(std::uint64_t ms);
}
