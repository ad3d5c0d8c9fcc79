// Issue 4, the AUX area: write throughput and AUX sampling, each against an in-run memcpy baseline.
//
// 1. AUX write throughput: entries of 256 B, 4 KiB and 64 KiB appended by the hand-driven test_aux
//    PMU (TestAuxPmu::write -> core::AuxStream::append) into a 1 MiB AUX area, against memcpy of
//    the same entries into the same area memory plus a release store of aux_head. Overwrite mode
//    (the area mapped read-only) and normal mode with a consumer that frees the area every quarter
//    of it, by moving aux_tail (copy:0) or by copying the bytes out with ring::consume_aux
//    (copy:1), inside the timed region.
// 2. A sample carrying 4 KiB of its group leader's trace (PERF_SAMPLE_AUX, aux_sample_size 4096)
//    through the whole overflow path (TestPmu::count), against a 4 KiB memcpy from the leader's
//    AUX area into the sampler's ring (plus the data_head store) and against the same sample
//    without PERF_SAMPLE_AUX. The sampler's consumer moves data_tail every quarter of its ring.
// 3. Calltrace cost per instrumented call: the same leaf loop compiled without and with
//    -finstrument-functions (calltrace_work.c), the latter run without and with an enabled
//    calltrace event for the thread (overwrite AUX area of 1 MiB).
//
// Every benchmark checks its own result (bytes, positions, counts) and fails with SkipWithError.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "api/engine_instance.hpp"
#include "bench_events.hpp"
#include "calltrace_work.h"
#include "pmu/aux_sources/calltrace_pmu.hpp"
#include "support/aux_events.hpp"
#include "userperf/userperf.h"

namespace {

using namespace userperf;

constexpr std::size_t kAuxPages = 256;  // 1 MiB AUX area
constexpr std::size_t kDataPages = 256;
constexpr std::uint64_t kAuxSampleSize = 4096;

using bench::consume_all;
using bench::load_head;
using testing::MappedAux;

// The engine's default of 400 samples per 4 ms tick would throttle a benchmark; AUX writes are not
// throttled, but the samplers of benchmark 2 are.
void raise_sample_rate_limit() {
  core::EngineLimits limits = api::engine().limits();
  limits.max_sample_rate = 1u << 30;
  api::engine().set_limits(limits);
}

std::vector<std::uint8_t> pattern(std::size_t len, unsigned seed) {
  std::vector<std::uint8_t> bytes(len);
  for (std::size_t i = 0; i < len; ++i) bytes[i] = static_cast<std::uint8_t>(i * 31 + seed);
  return bytes;
}

// An entry to append, page-aligned: memcpy's speed depends on the source's alignment relative to
// the destination's (always page-aligned here), and every variant must copy from the same kind.
class Entry {
 public:
  Entry(std::size_t len, unsigned seed)
      : bytes_(pattern(len, seed)),
        copy_(static_cast<std::uint8_t*>(std::aligned_alloc(4096, (len + 4095) & ~4095ul))) {
    std::memcpy(copy_.get(), bytes_.data(), len);
  }
  const std::uint8_t* data() const { return copy_.get(); }
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(std::uint8_t* p) const { std::free(p); }
  };
  std::vector<std::uint8_t> bytes_;
  std::unique_ptr<std::uint8_t, Free> copy_;
};

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) userperf_close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  operator int() const { return fd_; }

 private:
  int fd_;
};

// A test_aux event with a 1 MiB AUX area mapped through the C API and enabled. Members are
// destroyed in reverse: the maps go before the fd, as a profiler does.
struct AuxEvent {
  Fd fd;
  MappedAux maps;
  core::Event* event = nullptr;
  testing::TestAuxPmu* pmu = nullptr;
  ring::AuxRing* aux = nullptr;

  AuxEvent(bool overwrite, std::size_t data_pages = 4, std::uint32_t watermark = 0)
      : fd(open_leader(watermark)), maps(fd, data_pages, kAuxPages, overwrite) {
    if (!maps.ok() || userperf_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) return;
    event = api::engine().event(fd);
    pmu = static_cast<testing::TestAuxPmu*>(event->pmu);
    aux = event->rb.load()->aux();
  }
  static int open_leader(std::uint32_t watermark) {
    perf_event_attr attr = testing::aux_attr();
    attr.aux_watermark = watermark;
    return userperf_perf_event_open(&attr, 0, -1, -1, 0);
  }
  bool ok() const { return aux != nullptr; }
  core::AuxStream::Append write(const void* bytes, std::size_t len) {
    return pmu->write(*event, bytes, len);
  }
};

// The newest len bytes of the area, read back through the consumer's mapping.
bool newest_bytes_are(const MappedAux& maps, const std::vector<std::uint8_t>& expected) {
  std::vector<std::uint8_t> got(expected.size());
  std::uint64_t head = 0;
  return ring::copy_newest_aux(maps.view(), got.data(), got.size(), &head) == got.size() &&
         got == expected;
}

void set_write_counters(benchmark::State& state, std::size_t len) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * len));
}

// ---- 1. AUX write throughput -------------------------------------------------------------------

void BM_AuxWrite_Overwrite(benchmark::State& state) {
  const auto len = static_cast<std::size_t>(state.range(0));
  AuxEvent ev(/*overwrite=*/true);
  if (!ev.ok()) return state.SkipWithError("cannot open, map and enable a test_aux event");
  const Entry entry(len, 1);
  const std::uint64_t head_before = ev.maps.aux_head();
  std::uint64_t n = 0, failed = 0;
  for (auto _ : state) {
    if (ev.write(entry.data(), len) != core::AuxStream::Append::kOk) ++failed;
    ++n;
  }
  if (failed != 0 || ev.pmu->source_of(*ev.event)->stream.dropped() != 0) {
    return state.SkipWithError("entries were dropped");
  }
  if (ev.maps.aux_head() - head_before != n * len || !newest_bytes_are(ev.maps, entry.bytes())) {
    return state.SkipWithError("aux_head or the newest entry is not what was written");
  }
  set_write_counters(state, len);
}
BENCHMARK(BM_AuxWrite_Overwrite)->ArgName("bytes")->Arg(256)->Arg(4096)->Arg(65536);

// Normal mode: aux_head is published when a handle ends, at each aux_watermark (here a quarter of
// the area, with a PERF_RECORD_AUX and a wakeup); the consumer frees what is published every
// quarter of the area, and reads the data ring.
void BM_AuxWrite_Normal(benchmark::State& state) {
  const auto len = static_cast<std::size_t>(state.range(0));
  const bool copy_out = state.range(1) != 0;
  AuxEvent ev(/*overwrite=*/false, 16, kAuxPages * testing::page() / 4);
  if (!ev.ok()) return state.SkipWithError("cannot open, map and enable a test_aux event");
  const Entry entry(len, 2);
  std::vector<std::uint8_t> out(ev.maps.aux_length);
  perf_event_mmap_page* control = ev.maps.ring.control();
  const std::uint64_t consume_every = ev.maps.aux_length / 4 / len;
  const ring::AuxView view = ev.maps.view();
  std::uint64_t n = 0, failed = 0, consumed = 0, last_copy = 0;
  for (auto _ : state) {
    if (ev.write(entry.data(), len) != core::AuxStream::Append::kOk) ++failed;
    if (++n % consume_every == 0) {
      if (copy_out) {
        last_copy = ring::consume_aux(view, control, out.data(), out.size());
        consumed += last_copy;
      } else {
        const std::uint64_t head = ev.maps.aux_head();
        consumed += head - std::atomic_ref<__u64>(control->aux_tail).load();
        std::atomic_ref<__u64>(control->aux_tail).store(head, std::memory_order_release);
      }
      consume_all(control);
    }
  }
  if (failed != 0 || ev.pmu->source_of(*ev.event)->stream.dropped() != 0) {
    return state.SkipWithError("entries were dropped: the consumer did not keep up");
  }
  // Every watermark crossing published aux_head, so each consumer pass found a whole quarter.
  const std::uint64_t head = ev.maps.aux_head();
  if (consumed != (n / consume_every) * consume_every * len || head > n * len ||
      n * len - head >= ev.maps.aux_length / 4) {
    return state.SkipWithError("aux_head or the consumed byte count is wrong");
  }
  if (last_copy >= len && std::memcmp(out.data() + last_copy - len, entry.data(), len) != 0) {
    return state.SkipWithError("consume_aux did not copy out the entries");
  }
  set_write_counters(state, len);
}
BENCHMARK(BM_AuxWrite_Normal)
    ->ArgNames({"bytes", "copy"})
    ->ArgsProduct({{256, 4096, 65536}, {0, 1}});

// Baseline (locked:0): memcpy of the entry into the same area memory at the advancing masked
// position, then a release store of aux_head. No lock, no handle, no space check.
// locked:1 (a part, not a baseline) adds one uncontended locked add per entry (the write path has
// several): whether a locked instruction costs more right after a large copy than alone.
void BM_AuxWrite_Memcpy(benchmark::State& state) {
  const auto len = static_cast<std::size_t>(state.range(0));
  const bool locked = state.range(1) != 0;
  std::atomic<std::uint64_t> entries{0};
  AuxEvent ev(/*overwrite=*/true);
  if (!ev.ok()) return state.SkipWithError("cannot open, map and enable a test_aux event");
  const Entry entry(len, 3);
  std::uint8_t* area = ev.aux->data();
  const std::uint64_t mask = ev.aux->size() - 1;
  perf_event_mmap_page* producer = ev.aux->control();
  std::uint64_t head = 0;
  for (auto _ : state) {
    // The entry sizes divide the area, so an entry never wraps.
    std::memcpy(area + (head & mask), entry.data(), len);
    head += len;
    std::atomic_ref<__u64>(producer->aux_head).store(head, std::memory_order_release);
    if (locked) entries.fetch_add(1, std::memory_order_seq_cst);
  }
  if (!newest_bytes_are(ev.maps, entry.bytes())) {
    return state.SkipWithError("memcpy baseline: bad bytes");
  }
  set_write_counters(state, len);
}
BENCHMARK(BM_AuxWrite_Memcpy)
    ->ArgNames({"bytes", "locked"})
    ->ArgsProduct({{256, 4096, 65536}, {0, 1}});

// ---- 2. AUX sample -----------------------------------------------------------------------------

constexpr std::uint64_t kTypicalType =
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_PERIOD;

// A test_aux leader (overwrite, 1 MiB, filled) and a test-PMU sampler in its group, sampling on
// every count. The sampler's 1 MiB ring is read by moving data_tail every quarter of it.
struct AuxSampleGroup {
  AuxEvent leader{/*overwrite=*/true};
  Fd sampler_fd;
  testing::MappedRing sampler_ring;
  core::Event* sampler = nullptr;
  testing::TestPmu* pmu = nullptr;
  std::vector<std::uint8_t> newest;  // the newest kAuxSampleSize bytes of the leader's trace

  explicit AuxSampleGroup(std::uint64_t sample_type)
      : sampler_fd(open_sampler(leader.fd, sample_type)), sampler_ring(sampler_fd, kDataPages) {
    raise_sample_rate_limit();
    if (!leader.ok() || !sampler_ring.ok()) return;
    const std::vector<std::uint8_t> chunk = pattern(65536, 4);
    for (std::size_t filled = 0; filled < leader.maps.aux_length; filled += chunk.size()) {
      if (leader.write(chunk.data(), chunk.size()) != core::AuxStream::Append::kOk) return;
    }
    newest.assign(chunk.end() - kAuxSampleSize, chunk.end());
    sampler = api::engine().event(sampler_fd);
    pmu = static_cast<testing::TestPmu*>(sampler->pmu);
  }
  static int open_sampler(int leader, std::uint64_t sample_type) {
    perf_event_attr attr = testing::test_attr(sample_type);
    if (sample_type & PERF_SAMPLE_AUX) attr.aux_sample_size = kAuxSampleSize;
    return userperf_perf_event_open(&attr, 0, -1, leader, 0);
  }
  bool ok() const { return pmu != nullptr; }
  std::uint64_t fire(const core::SampleData& data) {
    return pmu->count(api::engine(), *sampler, 1, data);
  }
  perf_event_mmap_page* control() const { return sampler_ring.control(); }
  ring::DataRing& rb() const { return *sampler->rb.load(); }
};

// The header and the u64 fields before the AUX field (each of kTypicalType's is one u64).
std::uint32_t fixed_size(std::uint64_t sample_type) {
  return static_cast<std::uint32_t>(8 + 8 * __builtin_popcountll(sample_type & kTypicalType));
}

std::uint32_t record_size(std::uint64_t sample_type) {
  return fixed_size(sample_type) + (sample_type & PERF_SAMPLE_AUX ? 8 + kAuxSampleSize : 0);
}

core::SampleData sample_data() {
  core::SampleData data;
  data.ip = 0x401000;
  data.pid = 1234;
  data.tid = 1235;
  return data;
}

// One sample read back: its size, and (with PERF_SAMPLE_AUX) the AUX field: size 4096 and the
// leader's newest 4096 bytes. Returns nullptr or the error.
const char* check_one_sample(AuxSampleGroup& g, std::uint64_t sample_type) {
  if (g.fire(sample_data()) != 1) return "no overflow";
  const auto records = g.sampler_ring.drain();
  if (records.size() != 1 || testing::record_type(records[0]) != PERF_RECORD_SAMPLE ||
      records[0].size() != record_size(sample_type)) {
    return "not one sample record of the expected size";
  }
  if (!(sample_type & PERF_SAMPLE_AUX)) return nullptr;
  const std::size_t at = fixed_size(sample_type);
  if (testing::field_at<std::uint64_t>(records[0], at) != kAuxSampleSize ||
      std::memcmp(records[0].data() + at + 8, g.newest.data(), kAuxSampleSize) != 0) {
    return "the AUX field is not the leader's newest 4096 bytes";
  }
  return nullptr;
}

// The whole PMU path: TestPmu::count -> Engine::overflow -> output_sample, which sizes the AUX
// field under the leader area's byte lock and copies it through snapshot_aux.
void BM_AuxSample(benchmark::State& state, std::uint64_t sample_type) {
  AuxSampleGroup g(sample_type);
  if (!g.ok()) return state.SkipWithError("cannot set up the test_aux leader and its sampler");
  if (const char* err = check_one_sample(g, sample_type)) return state.SkipWithError(err);
  const std::uint32_t size = record_size(sample_type);
  const std::uint64_t consume_every = g.rb().data_size() / 4 / size;
  const core::SampleData data = sample_data();
  perf_event_mmap_page* control = g.control();
  const std::uint64_t head_before = load_head(control);
  std::uint64_t n = 0;
  for (auto _ : state) {
    g.fire(data);
    if (++n % consume_every == 0) consume_all(control);
  }
  if (g.sampler->lost_samples.load() != 0 || g.rb().pending_lost() != 0 ||
      load_head(control) - head_before != n * size) {
    return state.SkipWithError("samples were lost or data_head did not advance per sample");
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<std::int64_t>(
      state.iterations() * (sample_type & PERF_SAMPLE_AUX ? kAuxSampleSize : 0)));
  state.counters["record_bytes"] = size;
}
// aux: header + AUX field (4112 bytes); none: the header alone (8 bytes); typical_aux:
// IP|TID|TIME|ID|PERIOD + AUX (4152 bytes); typical: the 48-byte sample of bench_sample.
BENCHMARK_CAPTURE(BM_AuxSample, aux, std::uint64_t{PERF_SAMPLE_AUX});
BENCHMARK_CAPTURE(BM_AuxSample, none, std::uint64_t{0});
BENCHMARK_CAPTURE(BM_AuxSample, typical_aux, kTypicalType | PERF_SAMPLE_AUX);
BENCHMARK_CAPTURE(BM_AuxSample, typical, kTypicalType);

// Baseline (locked:0): a 4 KiB memcpy from the leader's AUX area (its newest bytes) into the
// sampler's ring at the advancing masked head, then the data_head store: what the AUX field alone
// must cost. locked:1 (a part) adds one locked add per copy, as BM_AuxWrite_Memcpy.
void BM_AuxSample_Memcpy4K(benchmark::State& state) {
  const bool locked = state.range(0) != 0;
  std::atomic<std::uint64_t> copies{0};
  AuxSampleGroup g(PERF_SAMPLE_AUX);
  if (!g.ok()) return state.SkipWithError("cannot set up the test_aux leader and its sampler");
  const std::uint8_t* src = g.leader.aux->data() + g.leader.aux->size() - kAuxSampleSize;
  std::uint8_t* ring = g.rb().data();
  const std::uint64_t mask = g.rb().data_size() - 1;
  perf_event_mmap_page* producer = g.rb().control();
  perf_event_mmap_page* control = g.control();
  const std::uint64_t consume_every = g.rb().data_size() / 4 / kAuxSampleSize;
  std::uint64_t head = load_head(control);
  std::uint64_t n = 0;
  for (auto _ : state) {
    std::memcpy(ring + (head & mask), src, kAuxSampleSize);  // page-aligned: never wraps
    head += kAuxSampleSize;
    std::atomic_ref<__u64>(producer->data_head).store(head, std::memory_order_release);
    if (locked) copies.fetch_add(1, std::memory_order_seq_cst);
    if (++n % consume_every == 0) consume_all(control);
  }
  const std::uint64_t last = (head - kAuxSampleSize) & mask;
  if (std::memcmp(ring + last, g.newest.data(), kAuxSampleSize) != 0) {
    return state.SkipWithError("memcpy baseline: bad bytes");
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kAuxSampleSize));
}
BENCHMARK(BM_AuxSample_Memcpy4K)->ArgName("locked")->Arg(0)->Arg(1);

// ---- 3. Calltrace cost per instrumented call --------------------------------------------------

constexpr unsigned long kCalls = 1000;  // leaf calls per iteration (+1 call of the loop itself)

enum class CalltraceCase { kPlain, kInstrumentedNoEvent, kInstrumentedTraced };

// A calltrace event for this thread with a 1 MiB overwrite AUX area, mapped and enabled.
struct CalltraceEvent {
  Fd fd;
  MappedAux maps;
  core::Event* event = nullptr;

  CalltraceEvent() : fd(open_event()), maps(fd, 4, kAuxPages, /*overwrite=*/true) {
    if (maps.ok() && userperf_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) == 0) {
      event = api::engine().event(fd);
    }
  }
  static int open_event() {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = static_cast<std::uint32_t>(userperf_pmu_type("calltrace"));
    attr.disabled = 1;
    return userperf_perf_event_open(&attr, 0, -1, -1, 0);
  }
  bool ok() const { return event != nullptr; }
  pmu::CalltracePmu::Stats stats() const {
    return static_cast<pmu::CalltracePmu*>(event->pmu)->stats(*event);
  }
};

void BM_Calltrace(benchmark::State& state, CalltraceCase which) {
  std::unique_ptr<CalltraceEvent> traced;
  if (which == CalltraceCase::kInstrumentedTraced) {
    traced = std::make_unique<CalltraceEvent>();
    if (!traced->ok()) return state.SkipWithError("cannot open, map and enable a calltrace event");
  }
  unsigned long (*work)(unsigned long) =
      which == CalltraceCase::kPlain ? calltrace_work_plain : calltrace_work_instrumented;
  const unsigned long expected = calltrace_work_plain(kCalls);
  const pmu::CalltracePmu::Stats before = traced ? traced->stats() : pmu::CalltracePmu::Stats{};
  std::uint64_t wrong = 0;
  for (auto _ : state) {
    if (work(kCalls) != expected) ++wrong;
  }
  if (wrong != 0) return state.SkipWithError("the work computed a wrong sum");
  if (traced) {
    // An enter and an exit per leaf call and per call of the loop.
    const pmu::CalltracePmu::Stats after = traced->stats();
    if (after.recorded - before.recorded != 2 * (kCalls + 1) * state.iterations() ||
        after.dropped != 0 || after.nested != 0) {
      return state.SkipWithError("calltrace did not store exactly two entries per call");
    }
    if (traced->maps.aux_head() == 0) return state.SkipWithError("nothing reached the AUX area");
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kCalls));
  // CPU seconds per leaf call (the console shows it with an SI prefix: 1.2n is 1.2 ns).
  state.counters["seconds_per_call"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kCalls),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
// plain: no -finstrument-functions; hooks_no_event: the hooks run, the thread has no calltrace
// event; traced: the hooks store every enter and exit.
BENCHMARK_CAPTURE(BM_Calltrace, plain, CalltraceCase::kPlain);
BENCHMARK_CAPTURE(BM_Calltrace, hooks_no_event, CalltraceCase::kInstrumentedNoEvent);
BENCHMARK_CAPTURE(BM_Calltrace, traced, CalltraceCase::kInstrumentedTraced);

}  // namespace

BENCHMARK_MAIN();
