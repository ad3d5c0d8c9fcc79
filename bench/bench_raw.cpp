// Benchmark 2: a 4 KiB PERF_SAMPLE_RAW payload in two fragments (1 KiB of bytes + 3 KiB through a
// memcpy copy callback) written as one 4112-byte sample into a mapped test-PMU event ring, against
// the in-run baseline of one 4 KiB memcpy into the same ring memory plus a release store of
// data_head. Bytes/s counts the 4096 payload bytes per iteration in every variant.
//
// The consumer: every kConsumeEvery iterations (about a quarter of the ring) the benchmark thread
// stores data_tail = data_head, inside the timed region of every variant.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "api/engine_instance.hpp"
#include "bench_events.hpp"
#include "core/sample_output.hpp"
#include "support/pmu/test_pmu.hpp"

namespace {

using namespace userperf;

constexpr std::size_t kDataPages = 256;  // 1 MiB
constexpr std::uint32_t kFirst = 1024;   // fragment 1: bytes
constexpr std::uint32_t kSecond = 3072;  // fragment 2: copy callback
constexpr std::uint32_t kPayload = kFirst + kSecond;
// header + u32 size + payload, padded to 8: 8 + 4 + 4096 + 4.
constexpr std::uint32_t kRecordSize = 8 + 4 + kPayload + 4;
constexpr std::uint64_t kConsumeEvery = 64;

using bench::BenchEvent;
using bench::consume_all;
using bench::load_head;

// A perf_copy_f as a tracepoint or BPF output would pass for memory it must copy itself.
std::size_t copy_bytes(void* dst, const void* src, std::size_t offset, std::size_t len) {
  std::memcpy(dst, static_cast<const std::uint8_t*>(src) + offset, len);
  return 0;
}

// The two source fragments, distinct patterns so a misplaced byte shows.
struct Payload {
  std::vector<std::uint8_t> first = std::vector<std::uint8_t>(kFirst);
  std::vector<std::uint8_t> second = std::vector<std::uint8_t>(kSecond);
  core::RawFragment tail;
  core::RawRecord raw;

  Payload() {
    for (std::uint32_t i = 0; i < kFirst; ++i) first[i] = static_cast<std::uint8_t>(i * 7 + 1);
    for (std::uint32_t i = 0; i < kSecond; ++i) second[i] = static_cast<std::uint8_t>(i * 13 + 5);
    tail = core::RawFragment{second.data(), kSecond, &copy_bytes, nullptr};
    raw.frag = core::RawFragment{first.data(), kFirst, nullptr, &tail};
  }
  Payload(const Payload&) = delete;
  Payload& operator=(const Payload&) = delete;
};

// Writes one sample and reads it back: a 4112-byte SAMPLE whose RAW field holds size 4100, the
// two fragments in order, and 4 zero bytes of padding.
template <class Write>
const char* check_one_sample(BenchEvent& ev, const Payload& p, Write&& write) {
  write();
  ring::Reader reader(ev.mapped().view);
  ring::Record r;
  if (reader.begin() != ring::ReadStatus::kOk || reader.next(r) != ring::ReadStatus::kOk) {
    return "no record after one sample";
  }
  std::uint32_t raw_size = 0;
  std::memcpy(&raw_size, r.bytes.data() + 8, sizeof raw_size);
  const std::uint8_t* body = r.bytes.data() + 12;
  const std::uint8_t zeros[4] = {};
  if (r.header.type != PERF_RECORD_SAMPLE || r.header.size != kRecordSize ||
      raw_size != kPayload + 4 || std::memcmp(body, p.first.data(), kFirst) != 0 ||
      std::memcmp(body + kFirst, p.second.data(), kSecond) != 0 ||
      std::memcmp(body + kPayload, zeros, sizeof zeros) != 0) {
    return "unexpected RAW sample record";
  }
  reader.commit();
  return nullptr;
}

const char* check_run(BenchEvent& ev, std::uint64_t head_before, std::uint64_t records) {
  if (ev.event().lost_samples.load() != 0 || ev.rb().pending_lost() != 0) {
    return "samples were lost: the consumer did not keep up";
  }
  if (load_head(ev.consumer_control()) - head_before != records * kRecordSize) {
    return "data_head did not advance by one record per sample";
  }
  return nullptr;
}

void set_counters(benchmark::State& state, std::uint64_t lost) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kPayload));
  state.counters["lost"] = static_cast<double>(lost);
}

// prepare + write + publish: core::output_sample with the two-fragment RawRecord.
void BM_Raw4K_OutputSample(benchmark::State& state) {
  BenchEvent ev(PERF_SAMPLE_RAW, kDataPages);
  if (!ev.ok()) return state.SkipWithError("cannot open and map a test-PMU event");
  Payload p;
  core::SampleData data;
  data.raw = &p.raw;
  data.period = 1;
  if (const char* err = check_one_sample(ev, p, [&] { core::output_sample(ev.event(), data); })) {
    return state.SkipWithError(err);
  }
  perf_event_mmap_page* control = ev.consumer_control();
  const std::uint64_t head_before = load_head(control);
  std::uint64_t n = 0;
  for (auto _ : state) {
    core::output_sample(ev.event(), data);
    if (++n % kConsumeEvery == 0) consume_all(control);
  }
  if (const char* err = check_run(ev, head_before, n)) return state.SkipWithError(err);
  set_counters(state, ev.event().lost_samples.load());
}
BENCHMARK(BM_Raw4K_OutputSample);

// The whole overflow path (TestPmu::count -> Engine::overflow -> output_sample).
void BM_Raw4K_Overflow(benchmark::State& state) {
  BenchEvent ev(PERF_SAMPLE_RAW, kDataPages);
  if (!ev.ok()) return state.SkipWithError("cannot open and map a test-PMU event");
  Payload p;
  core::SampleData data;
  data.raw = &p.raw;
  core::Engine& engine = api::engine();
  auto* pmu = static_cast<testing::TestPmu*>(ev.event().pmu);
  if (const char* err = check_one_sample(ev, p, [&] { pmu->count(engine, ev.event(), 1, data); })) {
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
BENCHMARK(BM_Raw4K_Overflow);

// Baseline: one 4 KiB memcpy into the same ring memory at the advancing masked head (split at the
// end of the ring), then a release store of data_head. stride 4096 is the ideal (page-aligned
// destination); stride 4112 copies to the payload offsets the engine writes to (4 mod 8), so the
// two baselines bracket the effect of alignment.
void BM_Raw4K_Memcpy(benchmark::State& state) {
  BenchEvent ev(PERF_SAMPLE_RAW, kDataPages);
  if (!ev.ok()) return state.SkipWithError("cannot open and map a test-PMU event");
  const std::uint64_t stride = static_cast<std::uint64_t>(state.range(0));
  const std::uint64_t at = stride == kRecordSize ? 12 : 0;  // payload offset in a record
  std::vector<std::uint8_t> source(kPayload);
  for (std::uint32_t i = 0; i < kPayload; ++i) source[i] = static_cast<std::uint8_t>(i * 3 + 1);
  std::uint8_t* ring = ev.rb().data();
  const std::uint64_t size = ev.rb().data_size();
  perf_event_mmap_page* producer = ev.rb().control();
  perf_event_mmap_page* control = ev.consumer_control();
  const std::uint64_t head_before = load_head(control);
  std::uint64_t head = head_before;
  std::uint64_t n = 0;
  for (auto _ : state) {
    const std::uint64_t offset = (head + at) & (size - 1);
    if (offset + kPayload <= size) {
      std::memcpy(ring + offset, source.data(), kPayload);
    } else {
      const std::uint64_t first = size - offset;
      std::memcpy(ring + offset, source.data(), first);
      std::memcpy(ring, source.data() + first, kPayload - first);
    }
    head += stride;
    std::atomic_ref<__u64>(producer->data_head).store(head, std::memory_order_release);
    if (++n % kConsumeEvery == 0) consume_all(control);
  }
  const std::uint64_t last = (head - stride + at) & (size - 1);
  if (load_head(control) - head_before != n * stride ||
      (last + kPayload <= size && std::memcmp(ring + last, source.data(), kPayload) != 0)) {
    return state.SkipWithError("baseline did not write the payload");
  }
  set_counters(state, 0);
}
BENCHMARK(BM_Raw4K_Memcpy)->ArgName("stride")->Arg(kPayload)->Arg(kRecordSize);

}  // namespace

BENCHMARK_MAIN();
