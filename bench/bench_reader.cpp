// Benchmark 4: draining a full ring with ring::Reader (begin / next... / commit), in bytes/s,
// against the in-run baseline of memcpy of the same bytes out of the ring.
//
// The ring (1 MiB, a mapped test-PMU event) is filled once through output_sample until the next
// record would not fit, starting half-way round so one record wraps at the end of the data area.
// Each iteration rewinds data_tail to where the fill began and drains it all again, so every
// iteration reads the same ~1 MiB. Two record sets: 48-byte samples (IP|TID|TIME|ID|PERIOD), and
// a mixed set of the same samples with a RAW field of 4..4096 bytes (half small, a third medium,
// the rest large).
//
// Consumers: "walk" looks at each record where it lies (the Reader hands out spans into the ring;
// it copies only the wrapping record) and sums the sizes; "copy" also copies every record out, as
// perf record does into its output buffer. The memcpy baseline copies the whole region in at most
// two pieces.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "bench_events.hpp"

namespace {

using namespace userperf;

constexpr std::uint64_t kSampleType =
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_PERIOD;
constexpr std::size_t kDataPages = 256;  // 1 MiB
constexpr std::uint32_t kMaxRaw = 4096;

// RAW payload size of the i-th record of the mixed set (deterministic).
std::uint32_t mixed_raw_size(std::uint64_t i) {
  std::uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull;
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  const std::uint32_t pick = static_cast<std::uint32_t>(x % 100);
  const std::uint32_t r = static_cast<std::uint32_t>(x >> 32);
  if (pick < 50) return 4 + r % 61;    // 4..64
  if (pick < 85) return 65 + r % 448;  // 65..512
  return 513 + r % (kMaxRaw - 512);    // 513..4096
}

// 48-byte samples, or the same with RAW payloads of mixed_raw_size(i) bytes, filling the ring.
class SampleRing {
 public:
  explicit SampleRing(bool mixed)
      : ring_(mixed ? kSampleType | PERF_SAMPLE_RAW : kSampleType, kDataPages), source_(kMaxRaw) {
    if (!ring_.ok()) return;
    for (std::uint32_t i = 0; i < kMaxRaw; ++i) source_[i] = static_cast<std::uint8_t>(i);
    data_.ip = 0x401000;
    data_.pid = 1234;
    data_.tid = 1235;
    data_.period = 1;
    if (mixed) data_.raw = &raw_;
    ring_.fill(data_, [this, mixed](std::uint64_t i) {
      if (mixed) raw_.frag = core::RawFragment{source_.data(), mixed_raw_size(i), nullptr, nullptr};
    });
  }
  const bench::FilledRing& filled() const { return ring_; }

 private:
  bench::FilledRing ring_;
  std::vector<std::uint8_t> source_;
  core::RawRecord raw_;
  core::SampleData data_;
};

void set_counters(benchmark::State& state, const bench::FilledRing& ring, std::uint64_t lost) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * ring.bytes()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * ring.records()));
  state.counters["ring_bytes"] = static_cast<double>(ring.bytes());
  state.counters["records"] = static_cast<double>(ring.records());
  state.counters["lost"] = static_cast<double>(lost);
}

// range(0): 0 = 48-byte samples, 1 = mixed sizes; range(1): 0 = walk, 1 = copy out.
void BM_ReaderDrain(benchmark::State& state) {
  SampleRing samples(state.range(0) == 1);
  const bench::FilledRing& filled = samples.filled();
  if (!filled.filled()) return state.SkipWithError("could not fill the ring without loss");
  const bool copy = state.range(1) == 1;
  std::vector<std::uint8_t> out(copy ? filled.view().data_size : 0);
  ring::Reader reader(filled.view());  // outside the loop: it allocates its wrap buffer
  bool wrong = false;
  for (auto _ : state) {
    filled.rewind();  // the same records again
    std::uint64_t records = 0, bytes = 0;
    if (reader.begin() != ring::ReadStatus::kOk) wrong = true;
    ring::Record r{};
    ring::ReadStatus status;
    while ((status = reader.next(r)) == ring::ReadStatus::kOk) {
      if (copy) std::memcpy(out.data() + bytes, r.bytes.data(), r.bytes.size());
      benchmark::DoNotOptimize(r.bytes.data());
      bytes += r.header.size;
      ++records;
    }
    reader.commit();
    // Every record, all the bytes, nothing lost and no error: checked each pass, it is cheap.
    if (status != ring::ReadStatus::kEmpty || records != filled.records() ||
        bytes != filled.bytes() || reader.lost() != 0 || r.header.type != PERF_RECORD_SAMPLE) {
      wrong = true;
    }
    benchmark::ClobberMemory();
  }
  if (wrong) return state.SkipWithError("the Reader did not return every record of the fill");
  set_counters(state, filled, reader.lost());
}
BENCHMARK(BM_ReaderDrain)->ArgNames({"mixed", "copy"})->ArgsProduct({{0, 1}, {0, 1}});

// Baseline: memcpy of the same bytes out of the ring (two pieces at the wrap), then the tail.
void BM_MemcpyDrain(benchmark::State& state) {
  SampleRing samples(state.range(0) == 1);
  const bench::FilledRing& filled = samples.filled();
  if (!filled.filled()) return state.SkipWithError("could not fill the ring without loss");
  const ring::RingView& view = filled.view();
  std::vector<std::uint8_t> out(view.data_size);
  const std::uint64_t offset = filled.start() & (view.data_size - 1);
  const std::uint64_t first = std::min(filled.bytes(), view.data_size - offset);
  for (auto _ : state) {
    filled.rewind();
    const std::uint64_t tail = std::atomic_ref<__u64>(view.control->data_tail).load();
    const std::uint64_t bytes = bench::load_head(view.control) - tail;
    std::memcpy(out.data(), view.data + offset, first);
    std::memcpy(out.data() + first, view.data, bytes - first);
    std::atomic_ref<__u64>(view.control->data_tail).store(tail + bytes, std::memory_order_release);
    benchmark::ClobberMemory();
  }
  // The copy starts with the first record of the fill: a 48-byte or larger SAMPLE.
  perf_event_header h;
  std::memcpy(&h, out.data(), sizeof h);
  if (h.type != PERF_RECORD_SAMPLE || h.size < 48) {
    return state.SkipWithError("baseline did not copy the records");
  }
  set_counters(state, filled, 0);
}
BENCHMARK(BM_MemcpyDrain)->ArgName("mixed")->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
