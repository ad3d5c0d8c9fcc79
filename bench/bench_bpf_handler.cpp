// Overflow-handler overhead: the whole overflow path of a test-PMU event (48-byte sample written
// to its ring) with a clang-compiled ~20-instruction filter attached by PERF_EVENT_IOC_SET_BPF,
// against the same path without a program (the in-run baseline) and with the same filter written
// in C as a core::OverflowHandler. The program keeps every sample, so all three write the same
// records; the difference is the cost of running the filter.
#include <benchmark/benchmark.h>

#include <string>

#include "bench_events.hpp"
#include "core/engine.hpp"
#include "support/test_events.hpp"
#include "userperf/userperf.h"

namespace userperf::bench {
namespace {

using testing::fire;

// The filter of bench_filter.bpf.c, natively.
class NativeFilter : public core::OverflowHandler {
 public:
  bool on_overflow(core::Event&, const core::SampleData& data) override {
    const std::uint64_t ip =
        data.extra().regs_intr != nullptr ? data.extra().regs_intr->values[PERF_REG_X86_IP] : 0;
    if (data.period == 0) return false;
    if (ip < 0x400000 || ip >= 0x800000) return false;
    if ((data.addr >> 12) == 0x5) return false;
    return (data.addr & 0xf) != 0xf;
  }
};

enum class Handler { kNone, kBpf, kNative };

// Whole path (`fire`, the default) or the handler alone: its on_overflow called directly with the
// sample the path passes it, which is all the BPF filter adds to a sample, measured without the
// rest of the path (the clock, the ring) and its noise.
enum class Scope { kPath, kHandlerOnly };

void run(benchmark::State& state, Handler handler, Scope scope = Scope::kPath) {
  BenchEvent event(
      PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD,
      64);
  int prog = -1;
  if (handler == Handler::kBpf) {
    const std::string path = std::string(USERPERF_BPF_OBJECT_DIR) + "/progs/bench_filter.bpf.o";
    char log[4096];
    prog = userperf_bpf_prog_load(path.c_str(), "sample_filter", log, sizeof log);
    if (prog < 0 ||
        userperf_ioctl(event.fd(), PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog)) != 0) {
      state.SkipWithError(log);
      return;
    }
  }
  if (handler == Handler::kNative) {
    static NativeFilter filter;
    event.event().handler.store(&filter);
  }
  core::SampleRegs regs;
  regs.values[PERF_REG_X86_IP] = 0x401234;
  core::SampleExtras extras;
  extras.regs_intr = &regs;
  core::SampleData data;
  data.ip = 0x401234;
  data.addr = 0x7f0010;
  data.extras = &extras;
  std::uint64_t written = 0;
  if (scope == Scope::kHandlerOnly) {
    data.period = 1;  // as the path sets it
    core::OverflowHandler* h = event.event().handler.load();
    for (auto _ : state) benchmark::DoNotOptimize(h->on_overflow(event.event(), data));
  } else {
    for (auto _ : state) {
      fire(event.fd(), 1, data);
      if ((++written & 63) == 0) consume_all(event.consumer_control());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(written));
  }
  if (handler == Handler::kNative) event.event().handler.store(nullptr);
  if (prog >= 0) userperf_close(prog);
}

void BM_Overflow_NoHandler(benchmark::State& state) {
  run(state, Handler::kNone);
}
void BM_Overflow_NativeFilter(benchmark::State& state) {
  run(state, Handler::kNative);
}
void BM_Overflow_BpfFilter(benchmark::State& state) {
  run(state, Handler::kBpf);
}

void BM_Handler_NativeFilter(benchmark::State& state) {
  run(state, Handler::kNative, Scope::kHandlerOnly);
}
void BM_Handler_BpfFilter(benchmark::State& state) {
  run(state, Handler::kBpf, Scope::kHandlerOnly);
}

BENCHMARK(BM_Overflow_NoHandler);
BENCHMARK(BM_Overflow_NativeFilter);
BENCHMARK(BM_Overflow_BpfFilter);
BENCHMARK(BM_Handler_NativeFilter);
BENCHMARK(BM_Handler_BpfFilter);

}  // namespace
}  // namespace userperf::bench

BENCHMARK_MAIN();
