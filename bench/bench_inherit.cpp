// attr.inherit's thread hook (api/thread_interpose.cpp): pthread_create + join of an empty thread
// with no event open (the hook calls libc's at once: the baseline), with a counting inherit event
// of the test PMU open (the new thread gets a clone and folds it back at its end), and with an
// inherit task-clock event (a clone with a CPU-time timer of its own).
#include <benchmark/benchmark.h>
#include <linux/perf_event.h>
#include <pthread.h>

#include "support/engine_under_test.hpp"
#include "support/test_events.hpp"

namespace {

void* empty(void*) {
  return nullptr;
}

void create_join(benchmark::State& state) {
  for (auto _ : state) {
    pthread_t thread;
    if (pthread_create(&thread, nullptr, empty, nullptr) != 0) state.SkipWithError("create");
    pthread_join(thread, nullptr);
  }
}

void BM_CreateJoin_NoEvent(benchmark::State& state) {
  create_join(state);
}
BENCHMARK(BM_CreateJoin_NoEvent)->UseRealTime();

void BM_CreateJoin_InheritTestEvent(benchmark::State& state) {
  perf_event_attr attr = userperf::testing::test_attr(0, 0);
  attr.inherit = 1;
  const int fd = userperf::testing::event_open(&attr, 0, -1, -1, 0);
  if (fd < 0) state.SkipWithError("open");
  create_join(state);
  userperf::testing::event_close(fd);
}
BENCHMARK(BM_CreateJoin_InheritTestEvent)->UseRealTime();

void BM_CreateJoin_InheritTaskClock(benchmark::State& state) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = 1'000'000;
  attr.inherit = 1;
  const int fd = userperf::testing::event_open(&attr, 0, -1, -1, 0);
  if (fd < 0) state.SkipWithError("open");
  create_join(state);
  userperf::testing::event_close(fd);
}
BENCHMARK(BM_CreateJoin_InheritTaskClock)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
