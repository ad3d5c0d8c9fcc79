// User tracepoints (include/userperf/tracepoint.h): the cost of userperf_trace when the tracepoint
// is not recorded, against a call of an empty out-of-line function; and when it is recorded (one
// event on the calling thread, a 1 MiB ring the benchmark consumes every 256 samples), against a
// memcpy of the same record bytes to the advancing masked position of a 1 MiB buffer plus a
// release store (the least a producer of those bytes can do). Two attrs: TID|RAW (the smallest
// tracepoint sample) and IP|TID|TIME|CPU|PERIOD|RAW (what `userperf record` asks for).
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "api/engine_instance.hpp"
#include "bench_events.hpp"
#include "pmu/tracepoint/tracepoint_pmu.hpp"
#include "userperf/tracepoint.h"
#include "userperf/userperf.h"

USERPERF_TRACEPOINT(bench, request, (uint64_t, id), (const char*, path), (int32_t, status))
USERPERF_TRACEPOINT(bench, off, (uint64_t, id), (const char*, path), (int32_t, status))

namespace {

using namespace userperf;

constexpr std::size_t kDataPages = 256;  // 1 MiB
constexpr std::uint64_t kConsumeEvery = 256;
constexpr std::uint64_t kRequestId = 1;
constexpr std::uint64_t kMinimal = PERF_SAMPLE_TID | PERF_SAMPLE_RAW;
constexpr std::uint64_t kRecordAttr = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                      PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW;
// The issue's row (W2 3/7): IP|TID|TIME|PERIOD|RAW.
constexpr std::uint64_t kIssueAttr =
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW;
// What `userperf record -e provider:name` asks for (record/recorder/event_config.cpp).
constexpr std::uint64_t kRecorderAttr = kIssueAttr | PERF_SAMPLE_IDENTIFIER;
// The RAW field of (5, "/x", -1): u32 size + 24 fixed bytes + "/x\0" + 1 pad.
constexpr std::uint32_t kRawField = 4 + 28;

__attribute__((noinline)) void empty_function(std::uint64_t id, const char* path,
                                              std::int32_t status) {
  asm volatile("" ::"r"(id), "r"(path), "r"(status));
}

void BM_Disabled_Tracepoint(benchmark::State& state) {
  std::uint64_t id = 0;
  for (auto _ : state) {
    userperf_trace(bench, off, id, "/x", -1);
    benchmark::DoNotOptimize(++id);
  }
}
BENCHMARK(BM_Disabled_Tracepoint);

void BM_Disabled_EmptyCallBaseline(benchmark::State& state) {
  std::uint64_t id = 0;
  for (auto _ : state) {
    empty_function(id, "/x", -1);
    benchmark::DoNotOptimize(++id);
  }
}
BENCHMARK(BM_Disabled_EmptyCallBaseline);

std::uint32_t record_size(std::uint64_t sample_type) {
  return 8 + 8 * static_cast<std::uint32_t>(__builtin_popcountll(sample_type & ~PERF_SAMPLE_RAW)) +
         kRawField;
}

// bench:request defined and registered, the engine unthrottled at benchmark rates; the attr of
// an event of it with `sample_type`, or nullptr after SkipWithError.
const char* prepare_request() {
  core::EngineLimits limits = api::engine().limits();
  limits.max_sample_rate = 1u << 30;  // no throttling at benchmark rates
  api::engine().set_limits(limits);
  // A strong reference: it links the library's userperf_tracepoint_* into this executable, so the
  // descriptors' constructors found them (weak references alone do not pull an archive member).
  if (userperf_tracepoint_check(&userperf_tp_bench_request, nullptr, 0) != 0) {
    return "bench:request is not a valid descriptor";
  }
  pmu::tracepoint_define(kRequestId, "bench:request");
  if (userperf_tp_bench_request.library_slot == 0) return "bench:request did not register";
  return nullptr;
}

perf_event_attr request_attr(std::uint64_t sample_type) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.config = kRequestId;
  attr.sample_period = 1;
  attr.sample_type = sample_type;
  return attr;
}

// The timed loop: an event of `attr` on this thread, its ring consumed every kConsumeEvery hits,
// one bench:request hit per iteration; after it, one record of the expected size per hit. Returns
// nullptr or what went wrong.
const char* time_hits(benchmark::State& state, perf_event_attr attr) {
  const int fd = userperf_perf_event_open(&attr, 0, -1, -1, 0);
  if (fd < 0) return "cannot open the tracepoint event";
  const char* err = nullptr;
  {
    testing::MappedRing ring(fd, kDataPages);
    if (!ring.ok()) {
      err = "cannot map the ring";
    } else {
      perf_event_mmap_page* control = ring.control();
      const std::uint64_t head_before = bench::load_head(control);
      std::uint64_t n = 0;
      for (auto _ : state) {
        userperf_trace(bench, request, 5, "/x", -1);
        if (++n % kConsumeEvery == 0) bench::consume_all(control);
      }
      const std::uint64_t written = bench::load_head(control) - head_before;
      if (written != n * record_size(attr.sample_type)) {
        err = "not one record of the expected size per iteration";
      }
      state.SetBytesProcessed(static_cast<std::int64_t>(written));
    }
  }
  userperf_close(fd);
  return err;
}

void BM_Enabled_Tracepoint(benchmark::State& state) {
  const auto sample_type = static_cast<std::uint64_t>(state.range(0));
  if (const char* err = prepare_request()) return state.SkipWithError(err);
  perf_event_attr attr = request_attr(sample_type);
  if (const char* err = time_hits(state, attr)) state.SkipWithError(err);
}
BENCHMARK(BM_Enabled_Tracepoint)
    ->Arg(kMinimal)
    ->Arg(kIssueAttr)
    ->Arg(kRecorderAttr)
    ->Arg(kRecordAttr);

// The same hit (kIssueAttr) with `threads` - 1 other threads holding an event of the same
// tracepoint, opened before the firing thread's (the table holds one event per recorded thread, as
// under `userperf record`): the firing thread's lookup must not grow with them.
void BM_Enabled_Tracepoint_AmongThreads(benchmark::State& state) {
  const auto threads = static_cast<int>(state.range(0));
  if (const char* err = prepare_request()) return state.SkipWithError(err);
  perf_event_attr attr = request_attr(kIssueAttr);
  std::atomic<int> opened{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> others;
  for (int i = 1; i < threads; ++i) {
    others.emplace_back([&] {
      const int fd = userperf_perf_event_open(&attr, 0, -1, -1, 0);
      opened.fetch_add(1);
      while (!done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (fd >= 0) userperf_close(fd);
    });
  }
  while (opened.load() < threads - 1) std::this_thread::yield();
  const char* err = time_hits(state, attr);
  done.store(true);
  for (std::thread& t : others) t.join();
  if (err != nullptr) state.SkipWithError(err);
}
BENCHMARK(BM_Enabled_Tracepoint_AmongThreads)->ArgName("threads")->Arg(1)->Arg(64)->UseRealTime();

void BM_Enabled_MemcpyBaseline(benchmark::State& state) {
  const std::uint32_t size = record_size(static_cast<std::uint64_t>(state.range(0)));
  const std::uint64_t mask = kDataPages * 4096 - 1;
  std::vector<std::uint8_t> ring(mask + 1 + size);  // a record at the end may run past it
  std::vector<std::uint8_t> record(size, 0x5a);
  std::atomic<std::uint64_t> head{0};
  std::uint64_t position = 0;
  for (auto _ : state) {
    std::memcpy(ring.data() + (position & mask), record.data(), size);
    position += size;
    head.store(position, std::memory_order_release);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(position));
}
BENCHMARK(BM_Enabled_MemcpyBaseline)
    ->Arg(kMinimal)
    ->Arg(kIssueAttr)
    ->Arg(kRecorderAttr)
    ->Arg(kRecordAttr);

}  // namespace

BENCHMARK_MAIN();
