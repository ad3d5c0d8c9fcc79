// The workload of `userperf trace-demo`, compiled with -finstrument-functions
// (tools/CMakeLists.txt) so that every call and return below reaches the calltrace PMU through the
// hooks library. The call tree is fixed: run -> {parse -> tokenize, compute -> {transform, reduce},
// emit}, repeated.
#include "trace_demo_workload.hpp"

#include <time.h>

#include <cstdint>

namespace {

volatile std::uint64_t g_sink;

__attribute__((no_instrument_function)) std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace

extern "C" {

__attribute__((noinline)) void trace_demo_burn(std::uint64_t ns) {
  const std::uint64_t end = thread_cpu_ns() + ns;
  while (thread_cpu_ns() < end) {
    for (int i = 0; i < 500; ++i) g_sink = g_sink * 31 + static_cast<std::uint64_t>(i);
  }
}

__attribute__((noinline)) void trace_demo_tokenize(std::uint64_t ns) {
  trace_demo_burn(ns);
}
__attribute__((noinline)) void trace_demo_parse(std::uint64_t ns) {
  trace_demo_tokenize(ns);
}
__attribute__((noinline)) void trace_demo_transform(std::uint64_t ns) {
  trace_demo_burn(ns);
}
__attribute__((noinline)) void trace_demo_reduce(std::uint64_t ns) {
  trace_demo_burn(ns);
}
__attribute__((noinline)) void trace_demo_compute(std::uint64_t ns) {
  trace_demo_transform(ns / 2);
  trace_demo_reduce(ns / 2);
}
__attribute__((noinline)) void trace_demo_emit(std::uint64_t ns) {
  trace_demo_burn(ns);
}

__attribute__((noinline)) void trace_demo_run(std::uint64_t ms) {
  // Rounds of 100 us: parse 20%, compute 60%, emit 20%.
  for (std::uint64_t round = 0; round < ms * 10; ++round) {
    trace_demo_parse(20'000);
    trace_demo_compute(60'000);
    trace_demo_emit(20'000);
  }
}

}  // extern "C"
