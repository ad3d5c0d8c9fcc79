// Benchmark 1: one 48-byte PERF_RECORD_SAMPLE (IP|TID|TIME|ID|PERIOD) prepared, written and
// published into a mapped test-PMU event ring, against the in-run baseline of a minimal producer:
// memcpy of 48 bytes to the advancing masked position of the same ring memory plus a release
// store of data_head. The OutputHandle alone and the parts of prepare are measured to split the
// engine's overhead from the ring's.
//
// The consumer: every kConsumeEvery iterations the benchmark thread stores data_tail = data_head
// through the consumer mapping. That store is inside the timed region of every variant, baseline
// included (one acquire load and one release store per 256 samples).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <time.h>

#include <atomic>
#include <cstring>
#include <memory>

#include "api/engine_instance.hpp"
#include "bench_events.hpp"
#include "core/sample_output.hpp"
#include "ring/output_handle.hpp"
#include "support/pmu/test_pmu.hpp"
#include "support/tsc_clock.hpp"

namespace {

using namespace userperf;

constexpr std::uint64_t kSampleType =
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_PERIOD;
constexpr std::uint32_t kRecordSize = 48;  // 8 header + 5 * 8 body
constexpr std::size_t kDataPages = 256;    // 1 MiB: the 1+256 page mapping
constexpr std::uint64_t kConsumeEvery = 256;

using bench::BenchEvent;
using bench::consume_all;
using bench::load_head;

core::SampleData sample_data() {
  core::SampleData data;
  data.ip = 0x401000;
  data.pid = 1234;
  data.tid = 1235;
  data.period = 1;
  return data;
}

// Writes one sample through the real path and reads it back with ring::Reader: the record the
// benchmark is about to time is the one the issue describes. Returns nullptr or the error.
template <class Write>
const char* check_one_sample(BenchEvent& ev, Write&& write) {
  write();
  ring::Reader reader(ev.mapped().view);
  ring::Record r;
  if (reader.begin() != ring::ReadStatus::kOk || reader.next(r) != ring::ReadStatus::kOk) {
    return "no record after one sample";
  }
  std::uint64_t ip = 0, period = 0;
  std::memcpy(&ip, r.bytes.data() + 8, sizeof ip);
  std::memcpy(&period, r.bytes.data() + 40, sizeof period);
  if (r.header.type != PERF_RECORD_SAMPLE || r.header.size != kRecordSize || ip != 0x401000 ||
      period != 1) {
    return "unexpected sample record";
  }
  ring::Record extra;
  if (reader.next(extra) != ring::ReadStatus::kEmpty) return "more than one record per sample";
  reader.commit();
  return nullptr;
}

// After the timed loop: every iteration published exactly one record and nothing was lost.
const char* check_run(BenchEvent& ev, std::uint64_t head_before, std::uint64_t records) {
  const std::uint64_t written = load_head(ev.consumer_control()) - head_before;
  if (ev.event().lost_samples.load() != 0 || ev.rb().pending_lost() != 0) {
    return "samples were lost: the consumer did not keep up";
  }
  if (written != records * kRecordSize) return "data_head did not advance by 48 bytes per sample";
  return nullptr;
}

void set_counters(benchmark::State& state, std::uint64_t lost) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kRecordSize));
  state.counters["lost"] = static_cast<double>(lost);
}

// The full overflow path a PMU takes: TestPmu::count (period accounting) -> Engine::overflow
// (grace-period guard) -> perf_event_overflow (state, clock, throttle) -> output_sample.
void BM_Sample48_Overflow(benchmark::State& state) {
  BenchEvent ev(kSampleType, kDataPages);
  if (!ev.ok()) return state.SkipWithError("cannot open and map a test-PMU event");
  core::Engine& engine = api::engine();
  auto* pmu = static_cast<testing::TestPmu*>(ev.event().pmu);
  const core::SampleData data = sample_data();
  if (const char* err = check_one_sample(ev, [&] { pmu->count(engine, ev.event(), 1, data); })) {
    return state.SkipWithError(err);
  }
  perf_event_mmap_page* control = ev.consumer_control();
  const std::uint64_t head_before = load_head(control);
  std::uint64_t n = 0;
  for (auto _ : state) {
    pmu->count(engine, ev.event(), 1, data);
    if (++n % kConsumeEvery == 0) consume_all(control);
  }
  if (const char* err = check_run(ev, head_before, n)) return state.SkipWithError(err);
  set_counters(state, ev.event().lost_samples.load());
}
BENCHMARK(BM_Sample48_Overflow);

// The engine's part of it without the PMU's: Engine::overflow (grace-period guard, state, clock,
// throttle, refresh limit, handler) -> output_sample. TestPmu::count adds the period accounting
// and a copy of the SampleData.
void BM_Sample48_EngineOverflow(benchmark::State& state) {
  BenchEvent ev(kSampleType, kDataPages);
  if (!ev.ok()) return state.SkipWithError("cannot open and map a test-PMU event");
  core::Engine& engine = api::engine();
  core::SampleData data = sample_data();
  if (const char* err = check_one_sample(ev, [&] { engine.overflow(ev.event(), data, true); })) {
    return state.SkipWithError(err);
  }
  perf_event_mmap_page* control = ev.consumer_control();
  const std::uint64_t head_before = load_head(control);
  std::uint64_t n = 0;
  for (auto _ : state) {
    engine.overflow(ev.event(), data, true);
    if (++n % kConsumeEvery == 0) consume_all(control);
  }
  if (const char* err = check_run(ev, head_before, n)) return state.SkipWithError(err);
  set_counters(state, ev.event().lost_samples.load());
}
BENCHMARK(BM_Sample48_EngineOverflow);

// What the issue calls "prepared, written and published": core::output_sample on the event.
void BM_Sample48_OutputSample(benchmark::State& state) {
  BenchEvent ev(kSampleType, kDataPages);
  if (!ev.ok()) return state.SkipWithError("cannot open and map a test-PMU event");
  core::SampleData data = sample_data();
  if (const char* err = check_one_sample(ev, [&] { core::output_sample(ev.event(), data); })) {
    return state.SkipWithError(err);
  }
  perf_event_mmap_page* control = ev.consumer_control();
  const std::uint64_t head_before = load_head(control);
  std::uint64_t n = 0;
  for (auto _ : state) {
    data.time = ev.event().clock_now();  // a sample carries its time; the overflow path reads it
    core::output_sample(ev.event(), data);
    if (++n % kConsumeEvery == 0) consume_all(control);
  }
  if (const char* err = check_run(ev, head_before, n)) return state.SkipWithError(err);
  set_counters(state, ev.event().lost_samples.load());
}
BENCHMARK(BM_Sample48_OutputSample);

// Baseline: what any producer must do at least: copy 48 bytes to the masked head (in two pieces
// when the record wraps) and publish the head with a release store. No space check, no atomics.
void BM_Sample48_Memcpy(benchmark::State& state) {
  BenchEvent ev(kSampleType, kDataPages);
  if (!ev.ok()) return state.SkipWithError("cannot open and map a test-PMU event");
  // The bytes of a real record, so the baseline copies what the engine writes.
  core::SampleData data = sample_data();
  if (const char* err = check_one_sample(ev, [&] { core::output_sample(ev.event(), data); })) {
    return state.SkipWithError(err);
  }
  alignas(8) std::uint8_t record[kRecordSize];
  std::memcpy(record, ev.rb().data(), kRecordSize);

  std::uint8_t* ring = ev.rb().data();  // the producer's mapping of the same memfd pages
  const std::uint64_t size = ev.rb().data_size();
  perf_event_mmap_page* producer = ev.rb().control();
  perf_event_mmap_page* control = ev.consumer_control();
  const std::uint64_t head_before = load_head(control);
  std::uint64_t head = head_before;
  std::uint64_t n = 0;
  for (auto _ : state) {
    const std::uint64_t offset = head & (size - 1);
    if (offset + kRecordSize <= size) {
      std::memcpy(ring + offset, record, kRecordSize);
    } else {
      const std::uint64_t first = size - offset;
      std::memcpy(ring + offset, record, first);
      std::memcpy(ring, record + first, kRecordSize - first);
    }
    head += kRecordSize;
    std::atomic_ref<__u64>(producer->data_head).store(head, std::memory_order_release);
    if (++n % kConsumeEvery == 0) consume_all(control);
  }
  const std::uint64_t last = (head - kRecordSize) & (size - 1);
  if (load_head(control) - head_before != n * kRecordSize ||
      (last + kRecordSize <= size && std::memcmp(ring + last, record, kRecordSize) != 0)) {
    return state.SkipWithError("baseline did not write the records");
  }
  set_counters(state, 0);
}
BENCHMARK(BM_Sample48_Memcpy);

struct Sample48 {
  perf_event_header header;
  std::uint64_t ip;
  std::uint32_t pid, tid;
  std::uint64_t time, id, period;
};
static_assert(sizeof(Sample48) == kRecordSize);

// The ring alone: OutputHandle::begin/put/end of 48 bytes on a DataRing, no event. puts:1 writes
// the record as one put; puts:7 writes it field by field. single:1 is the calling thread's own
// ring (the single-writer discipline, as a per-thread event's); single:0 a shared ring.
void BM_OutputHandle48(benchmark::State& state) {
  std::unique_ptr<ring::DataRing> rb;
  ring::RingConfig config;
  if (state.range(1) != 0) config.single_writer = gettid();
  if (ring::DataRing::create(kDataPages, config, rb) != 0) {
    return state.SkipWithError("DataRing::create failed");
  }
  const bool by_field = state.range(0) == 7;
  const Sample48 s{
      {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, kRecordSize}, 0x401000, 1234, 1235, 42, 7, 1};
  perf_event_mmap_page* control = rb->control();
  std::uint64_t n = 0, failed = 0;
  for (auto _ : state) {
    ring::OutputHandle h;
    if (h.begin(*rb, kRecordSize, 24) != ring::OutputStatus::kOk) {
      ++failed;
      continue;
    }
    if (by_field) {
      h.put(s.header);
      h.put(s.ip);
      h.put(s.pid);
      h.put(s.tid);
      h.put(s.time);
      h.put(s.id);
      h.put(s.period);
    } else {
      h.put(s);
    }
    h.end();
    if (++n % kConsumeEvery == 0) consume_all(control);
  }
  const std::uint64_t last = (load_head(control) - kRecordSize) & (rb->data_size() - 1);
  if (failed != 0 || rb->pending_lost() != 0 || load_head(control) != n * kRecordSize ||
      std::memcmp(rb->data() + last, &s, kRecordSize) != 0) {
    return state.SkipWithError("OutputHandle dropped or garbled records");
  }
  set_counters(state, failed);
}
BENCHMARK(BM_OutputHandle48)->ArgNames({"puts", "single"})->ArgsProduct({{1, 7}, {0, 1}});

// Parts of the engine path, to attribute its cost: the event clock (clock_gettime; the overflow
// path reads it once per sample), one locked RMW, and prepare_sample alone.
void BM_Part_ClockNow(benchmark::State& state) {
  BenchEvent ev(kSampleType, kDataPages);
  if (!ev.ok()) return state.SkipWithError("cannot open and map a test-PMU event");
  // The event's clock is the default one: the TSC clock where the TSC is invariant.
  state.SetLabel(support::tsc_clock_in_use() ? "tsc" : "clock_gettime");
  std::uint64_t last = 0;
  for (auto _ : state) {
    const std::uint64_t now = ev.event().clock_now();
    benchmark::DoNotOptimize(now);
    if (now < last) return state.SkipWithError("CLOCK_MONOTONIC went backwards");
    last = now;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_Part_ClockNow);

// What the TSC clock's fast path costs at least: one rdtsc (ClockNow adds the loads of the
// conversion, its multiply and the per-thread clamp).
void BM_Part_Rdtsc(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(support::read_tsc());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_Part_Rdtsc);

// The clock ClockNow replaced: clock_gettime(CLOCK_MONOTONIC) through the vDSO.
void BM_Part_ClockGettime(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(support::clock_gettime_ns(CLOCK_MONOTONIC));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_Part_ClockGettime);

// One uncontended locked read-modify-write (lock xadd), the unit the write path pays several
// times per sample (output_handle.cpp: writers_ twice, head_ and data_head by CAS).
void BM_Part_LockedAdd(benchmark::State& state) {
  std::atomic<std::uint64_t> counter{0};
  for (auto _ : state) counter.fetch_add(1, std::memory_order_seq_cst);
  if (counter.load() != static_cast<std::uint64_t>(state.iterations())) {
    return state.SkipWithError("lost increments");
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_Part_LockedAdd);

void BM_Part_PrepareSample(benchmark::State& state) {
  BenchEvent ev(kSampleType, kDataPages);
  if (!ev.ok()) return state.SkipWithError("cannot open and map a test-PMU event");
  const core::SampleData data = sample_data();
  core::PreparedSample prepared;
  for (auto _ : state) {
    core::prepare_sample(ev.event(), data, prepared);
    benchmark::DoNotOptimize(prepared);
  }
  if (prepared.size != kRecordSize) return state.SkipWithError("prepare_sample: size is not 48");
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_Part_PrepareSample);

}  // namespace

BENCHMARK_MAIN();
