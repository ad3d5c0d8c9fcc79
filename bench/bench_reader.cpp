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

#include "core/sample_output.hpp"
#include "support/test_events.hpp"

namespace {

using namespace userperf;

constexpr std::uint64_t kSampleType =
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_PERIOD;
constexpr std::size_t kDataPages = 256;  // 1 MiB
constexpr std::uint32_t kMaxRaw = 4096;

std::uint64_t load_head(perf_event_mmap_page* control) {
  return std::atomic_ref<__u64>(control->data_head).load(std::memory_order_acquire);
}

void store_tail(perf_event_mmap_page* control, std::uint64_t tail) {
  std::atomic_ref<__u64>(control->data_tail).store(tail, std::memory_order_release);
}

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

// A full ring and what the fill put in it.
class FilledRing {
 public:
  explicit FilledRing(bool mixed) : mixed_(mixed), source_(kMaxRaw) {
    for (std::uint32_t i = 0; i < kMaxRaw; ++i) source_[i] = static_cast<std::uint8_t>(i);
    perf_event_attr attr = testing::test_attr(mixed ? kSampleType | PERF_SAMPLE_RAW : kSampleType);
    fd_ = userperf_perf_event_open(&attr, 0, -1, -1, 0);
    if (fd_ < 0) return;
    event_ = core::Engine::instance().event(fd_);
    mapped_ = std::make_unique<testing::MappedRing>(fd_, kDataPages);
    if (!mapped_->ok()) return;
    data_.ip = 0x401000;
    data_.pid = 1234;
    data_.tid = 1235;
    data_.period = 1;
    if (mixed) data_.raw = &raw_;
    fill();
  }
  ~FilledRing() {
    mapped_.reset();
    if (fd_ >= 0) userperf_close(fd_);
  }
  FilledRing(const FilledRing&) = delete;
  FilledRing& operator=(const FilledRing&) = delete;

  bool ok() const { return records_ != 0 && event_->lost_samples.load() == 0; }
  const ring::RingView& view() const { return mapped_->view; }
  perf_event_mmap_page* control() const { return mapped_->control(); }
  std::uint64_t start() const { return start_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t records() const { return records_; }

 private:
  std::uint32_t record_size(std::uint64_t i) const {
    return mixed_ ? 48 + static_cast<std::uint32_t>((4 + mixed_raw_size(i) + 7) & ~7u) : 48;
  }
  void write(std::uint64_t i) {
    if (mixed_) raw_.frag = core::RawFragment{source_.data(), mixed_raw_size(i), nullptr, nullptr};
    core::output_sample(*event_, data_);
  }
  void fill() {
    perf_event_mmap_page* control = mapped_->control();
    const std::uint64_t size = mapped_->view.data_size;
    // Half-way round first, consumed, so the fill wraps once.
    std::uint64_t i = 0;
    while (load_head(control) < size / 2) write(i++);
    start_ = load_head(control);
    store_tail(control, start_);
    for (;; ++i) {
      const std::uint32_t next = record_size(i);
      // ring_buffer_has_space: at most data_size - 1 bytes outstanding.
      if (load_head(control) - start_ + next > size - 1) break;
      write(i);
      ++records_;
    }
    bytes_ = load_head(control) - start_;
  }

  bool mixed_;
  std::vector<std::uint8_t> source_;
  int fd_ = -1;
  core::Event* event_ = nullptr;
  std::unique_ptr<testing::MappedRing> mapped_;
  core::RawRecord raw_;
  core::SampleData data_;
  std::uint64_t start_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint64_t records_ = 0;
};

void set_counters(benchmark::State& state, const FilledRing& ring, std::uint64_t lost) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * ring.bytes()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * ring.records()));
  state.counters["ring_bytes"] = static_cast<double>(ring.bytes());
  state.counters["records"] = static_cast<double>(ring.records());
  state.counters["lost"] = static_cast<double>(lost);
}

// range(0): 0 = 48-byte samples, 1 = mixed sizes; range(1): 0 = walk, 1 = copy out.
void BM_ReaderDrain(benchmark::State& state) {
  FilledRing filled(state.range(0) == 1);
  if (!filled.ok()) return state.SkipWithError("could not fill the ring without loss");
  const bool copy = state.range(1) == 1;
  std::vector<std::uint8_t> out(copy ? filled.view().data_size : 0);
  ring::Reader reader(filled.view());  // outside the loop: it allocates its wrap buffer
  bool wrong = false;
  for (auto _ : state) {
    store_tail(filled.control(), filled.start());  // rewind: the same records again
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
  FilledRing filled(state.range(0) == 1);
  if (!filled.ok()) return state.SkipWithError("could not fill the ring without loss");
  const ring::RingView& view = filled.view();
  std::vector<std::uint8_t> out(view.data_size);
  const std::uint64_t offset = filled.start() & (view.data_size - 1);
  const std::uint64_t first = std::min(filled.bytes(), view.data_size - offset);
  for (auto _ : state) {
    store_tail(filled.control(), filled.start());
    const std::uint64_t tail = std::atomic_ref<__u64>(view.control->data_tail).load();
    const std::uint64_t bytes = load_head(view.control) - tail;
    std::memcpy(out.data(), view.data + offset, first);
    std::memcpy(out.data() + first, view.data, bytes - first);
    store_tail(view.control, tail + bytes);
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
