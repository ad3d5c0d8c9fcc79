// The recorder's drain (issue 5 target: >= 1 GB/s): record::ThreadRing::drain, the loop
// `userperf record` runs every 15 ms over each thread's ring, from a full 1 MiB ring into a
// perfdata::Writer, against the in-run baseline of memcpy of the same bytes out of the ring.
//
// The ring is a mapped test-PMU event, received the way the recorder receives it (its memfd mapped
// a second time by ThreadRing::map), and filled once through output_sample until the next record
// would not fit. Each iteration rewinds data_tail to where the fill began and drains it all again.
// The Writer writes to /dev/null: what is measured is the recorder's own work (validating each
// record, copying it into the 256 KiB write buffer, one write(2) per buffer), not the disk.
// Two record sets: fp-mode samples (IP|TID|TIME|PERIOD|IDENTIFIER|CALLCHAIN, 16 frames: 184 B)
// and dwarf-mode samples (+ REGS_USER of 20 registers and 8 KiB of STACK_USER: 8.4 KiB).
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "bench_events.hpp"
#include "perfdata/writer.hpp"
#include "record/recorder/thread_ring.hpp"
#include "userperf/userperf.h"

namespace {

using namespace userperf;

constexpr std::size_t kDataPages = 256;  // 1 MiB
constexpr std::uint64_t kFpType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                  PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER |
                                  PERF_SAMPLE_CALLCHAIN;
constexpr std::uint64_t kRegsMask = 0xff0fff;  // perf's x86-64 user registers
constexpr std::uint32_t kStackBytes = 8192;

// fp-mode or dwarf-mode samples, filling the ring.
class SampleRing {
 public:
  explicit SampleRing(bool dwarf) : ring_(attr(dwarf), kDataPages), stack_(kStackBytes + 64, 0x5c) {
    if (!ring_.ok()) return;
    for (std::size_t i = 0; i < 18; ++i) chain_[i] = 0x401000 + 0x10 * i;
    chain_[0] = PERF_CONTEXT_USER;
    data_.ip = 0x401000;
    data_.pid = 1234;
    data_.tid = 1235;
    data_.period = 1000000;
    data_.extras = &extras_;
    extras_.callchain = chain_;
    extras_.callchain_nr = 17;
    if (dwarf) {
      regs_.abi = PERF_SAMPLE_REGS_ABI_64;
      regs_.values[PERF_REG_X86_SP] = reinterpret_cast<std::uint64_t>(stack_.data());
      extras_.regs_user = &regs_;
      extras_.stack_user = {stack_.data(), kStackBytes};
    }
    ring_.fill(data_, [](std::uint64_t) {});
  }
  const bench::FilledRing& filled() const { return ring_; }

 private:
  static perf_event_attr attr(bool dwarf) {
    perf_event_attr a = testing::test_attr(
        dwarf ? kFpType | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER : kFpType);
    if (dwarf) {
      a.sample_regs_user = kRegsMask;
      a.sample_stack_user = kStackBytes;
    }
    return a;
  }

  bench::FilledRing ring_;
  std::vector<std::uint8_t> stack_;
  std::uint64_t chain_[18] = {};
  core::SampleRegs regs_;
  core::SampleData data_;
  core::SampleExtras extras_;
};

void set_counters(benchmark::State& state, const bench::FilledRing& ring) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * ring.bytes()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * ring.records()));
  state.counters["ring_bytes"] = static_cast<double>(ring.bytes());
  state.counters["records"] = static_cast<double>(ring.records());
}

// range(0): 0 = fp-mode samples, 1 = dwarf-mode samples.
void BM_RecorderDrain(benchmark::State& state) {
  SampleRing samples(state.range(0) == 1);
  const bench::FilledRing& filled = samples.filled();
  if (!filled.filled()) return state.SkipWithError("could not fill the ring without loss");
  std::uint64_t id = 0;
  userperf_ioctl(filled.fd(), PERF_EVENT_IOC_ID, reinterpret_cast<unsigned long>(&id));
  auto mapped = record::ThreadRing::map(userperf_event_ring_fd(filled.fd()), 1234, 1235,
                                        {{id, filled.event().attr}});
  if (!mapped) return state.SkipWithError(("ThreadRing::map: " + mapped.error().message).c_str());
  record::ThreadRing* ring = mapped->get();
  auto created = perfdata::Writer::create("/dev/null");
  if (!created) return state.SkipWithError(created.error().message.c_str());
  perfdata::Writer* writer = created->get();
  perf_event_attr attr = testing::test_attr(kFpType);
  writer->add_attr(attr, {});
  bool wrong = false;
  for (auto _ : state) {
    filled.rewind();
    record::DrainCounts counts;
    if (const Expected<void> drained = ring->drain(*writer, counts); !drained) {
      return state.SkipWithError(drained.error().message.c_str());
    }
    wrong |= counts.records != filled.records();
  }
  if (wrong) return state.SkipWithError("a drain did not return every record");
  set_counters(state, filled);
}
BENCHMARK(BM_RecorderDrain)->Arg(0)->Arg(1)->ArgName("dwarf");

// Baseline: memcpy of the same bytes out of the ring (in at most two pieces) into a buffer.
void BM_MemcpyOutOfRing(benchmark::State& state) {
  SampleRing samples(state.range(0) == 1);
  const bench::FilledRing& filled = samples.filled();
  if (!filled.filled()) return state.SkipWithError("could not fill the ring without loss");
  const ring::RingView& view = filled.view();
  std::vector<std::uint8_t> out(view.data_size);
  const std::uint64_t mask = view.data_size - 1;
  const std::uint64_t begin = filled.start() & mask;
  const std::uint64_t first = std::min<std::uint64_t>(filled.bytes(), view.data_size - begin);
  for (auto _ : state) {
    std::memcpy(out.data(), view.data + begin, first);
    std::memcpy(out.data() + first, view.data, filled.bytes() - first);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, filled);
}
BENCHMARK(BM_MemcpyOutOfRing)->Arg(0)->Arg(1)->ArgName("dwarf");

}  // namespace

BENCHMARK_MAIN();
