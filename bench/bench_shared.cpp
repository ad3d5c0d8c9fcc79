// Benchmark 3: two threads writing 48-byte samples (IP|TID|TIME|ID|PERIOD) into ONE ring (two
// test-PMU events, the second redirected with PERF_EVENT_IOC_SET_OUTPUT) against the baseline of
// each thread writing into its OWN ring. The cost that differs is contention: the shared ring's
// head, writer count and data_head cache lines bounce between the cores.
//
// Google Benchmark's Threads(2): thread 0 opens and maps the events before the timed loop and
// checks and closes them after it; the other thread waits for it. GB's Time column is wall time
// per sample of both threads together (UseRealTime), its CPU column the CPU time per sample of
// one thread. Since dropped samples are cheaper than written ones, the comparison counter is
// cpu_ns_per_written: the CPU time of all threads over the samples that reached a ring. On a
// loaded 2-core VM CPU time is also what is not inflated by waiting for a core.
//
// The consumer: every kConsumeEvery iterations each thread moves data_tail of its ring up to
// data_head (never backwards: in the shared ring both threads do it). Inside the timed region.
// Samples the ring had no room for are counted (lost, lost_pct) and checked against the ring's
// contents; stalled_polls_pct, preemptions and wakeups say why they were lost.
#include <benchmark/benchmark.h>

#include <sched.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

#include "api/engine_instance.hpp"
#include "core/sample_output.hpp"
#include "ring/ring_memory.hpp"
#include "support/pmu/test_pmu.hpp"
#include "support/test_events.hpp"
#include "userperf/userperf.h"

namespace {

using namespace userperf;

constexpr std::uint64_t kSampleType =
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_PERIOD;
constexpr std::uint32_t kRecordSize = 48;
constexpr std::uint32_t kLostRecordSize = 24;  // header, id, lost (no sample_id_all)
constexpr std::size_t kDataPages = 256;
constexpr std::uint64_t kConsumeEvery = 256;
constexpr int kMaxThreads = 2;

std::uint64_t load_head(perf_event_mmap_page* control) {
  return std::atomic_ref<__u64>(control->data_head).load(std::memory_order_acquire);
}

// A consumer that keeps up; with two threads acting for it, the tail only moves forwards.
// Returns the data_head it saw.
std::uint64_t consume_all(perf_event_mmap_page* control) {
  const std::uint64_t head = load_head(control);
  std::atomic_ref<__u64> tail(control->data_tail);
  __u64 current = tail.load(std::memory_order_relaxed);
  while (static_cast<std::int64_t>(head - current) > 0 &&
         !tail.compare_exchange_weak(current, head, std::memory_order_release,
                                     std::memory_order_relaxed)) {
  }
  return head;
}

enum class Setup : int { kPending, kReady, kFailed };

// What thread 0 sets up for all threads of one run.
struct Run {
  int fds[kMaxThreads] = {-1, -1};
  core::Event* events[kMaxThreads] = {};
  std::unique_ptr<testing::MappedRing> rings[kMaxThreads];
  perf_event_mmap_page* controls[kMaxThreads] = {};  // the ring thread i writes into
  const char* error = nullptr;

  std::atomic<Setup> setup{Setup::kPending};
  std::atomic<int> finished{0};
  std::atomic<std::uint64_t> samples{0};
  std::atomic<std::uint64_t> cpu_ns{0};       // thread CPU time of the timed loops, all threads
  std::atomic<std::uint64_t> preemptions{0};  // involuntary context switches during them
  std::atomic<std::uint64_t> polls{0};
  std::atomic<std::uint64_t> stalled_polls{0};  // data_head had not moved since the last poll
};
Run g_run;

// Wakeups delivered on a ring's wakeup pipe since the last call (the pipe holds at most 64 KiB, so
// this saturates at 65536 per ring).
std::uint64_t drain_wakeups(int fd) {
  const int wake_fd = userperf_event_wakeup_fd(fd);
  if (wake_fd < 0) return 0;
  std::uint64_t n = 0;
  char buf[4096];
  ssize_t got;
  while ((got = read(wake_fd, buf, sizeof buf)) > 0) n += static_cast<std::uint64_t>(got);
  return n;
}

// Opens one event per thread; mapped rings for all (own) or only event 0 (shared).
const char* open_events(int threads, bool shared) {
  core::EngineLimits limits = api::engine().limits();
  limits.max_sample_rate = 1u << 30;  // no throttling: this measures the ring
  api::engine().set_limits(limits);
  for (int i = 0; i < threads; ++i) {
    perf_event_attr attr = testing::test_attr(kSampleType);
    // Same task (pid 0 from thread 0) so SET_OUTPUT accepts the pair.
    g_run.fds[i] = userperf_perf_event_open(&attr, 0, -1, -1, 0);
    if (g_run.fds[i] < 0) return "perf_event_open failed";
    g_run.events[i] = api::engine().event(g_run.fds[i]);
    if (i == 0 || !shared) {
      g_run.rings[i] = std::make_unique<testing::MappedRing>(g_run.fds[i], kDataPages);
      if (!g_run.rings[i]->ok()) return "mmap failed";
      g_run.controls[i] = g_run.rings[i]->control();
      drain_wakeups(g_run.fds[i]);
    } else {
      if (userperf_ioctl(g_run.fds[i], PERF_EVENT_IOC_SET_OUTPUT, g_run.fds[0]) != 0) {
        return "PERF_EVENT_IOC_SET_OUTPUT failed";
      }
      g_run.controls[i] = g_run.controls[0];
    }
  }
  return nullptr;
}

// After all threads finished: every sample is either in the ring or counted lost, and each LOST
// record written in front of a sample accounts for at least one of them.
std::uint64_t bytes_written(int threads, bool shared) {
  std::uint64_t advanced = 0;
  for (int i = 0; i < threads; ++i) {
    if (shared && i != 0) continue;
    advanced += load_head(g_run.controls[i]);
  }
  return advanced;
}

const char* check_rings(int threads, bool shared, std::uint64_t samples, std::uint64_t lost) {
  const std::uint64_t advanced = bytes_written(threads, shared);
  const std::uint64_t written = samples - lost;
  if (advanced < written * kRecordSize) return "fewer bytes in the rings than samples written";
  const std::uint64_t extra = advanced - written * kRecordSize;
  if (extra % kLostRecordSize != 0 || extra / kLostRecordSize > lost) {
    return "ring contents do not match the samples written";
  }
  return nullptr;
}

std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t involuntary_switches() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return static_cast<std::uint64_t>(usage.ru_nivcsw);
}

void close_events() {
  for (int i = 0; i < kMaxThreads; ++i) {
    g_run.rings[i].reset();
    if (g_run.fds[i] >= 0) userperf_close(g_run.fds[i]);
    g_run.fds[i] = -1;
    g_run.events[i] = nullptr;
    g_run.controls[i] = nullptr;
  }
  g_run.error = nullptr;
  g_run.samples = 0;
  g_run.cpu_ns = 0;
  g_run.preemptions = 0;
  g_run.polls = 0;
  g_run.stalled_polls = 0;
  g_run.finished = 0;
  g_run.setup = Setup::kPending;  // the next run's other threads wait again
}

// range(0): 0 writes with core::output_sample, 1 with the whole overflow path.
void two_threads(benchmark::State& state, bool shared) {
  const int threads = state.threads();
  const int me = state.thread_index();
  const bool overflow_path = state.range(0) == 1;
  if (me == 0) {
    g_run.error = open_events(threads, shared);
    g_run.setup = g_run.error == nullptr ? Setup::kReady : Setup::kFailed;
  } else {
    while (g_run.setup.load() == Setup::kPending) sched_yield();
  }
  // On failure every thread still enters the loop (zero iterations): GB's start barrier waits
  // for all of them.
  if (g_run.setup.load() == Setup::kFailed) state.SkipWithError(g_run.error);

  core::Engine& engine = api::engine();
  core::Event* event = g_run.events[me];
  perf_event_mmap_page* control = g_run.controls[me];
  core::SampleData data;
  data.ip = 0x401000 + static_cast<std::uint64_t>(me);
  data.period = 1;
  std::uint64_t n = 0, last_head = 0, stalled = 0;
  const std::uint64_t cpu_before = thread_cpu_ns();
  const std::uint64_t switches_before = involuntary_switches();
  for (auto _ : state) {
    if (overflow_path) {
      static_cast<testing::TestPmu*>(event->pmu)->count(engine, *event, 1, data);
    } else {
      core::output_sample(*event, data);
    }
    if (++n % kConsumeEvery == 0) {
      const std::uint64_t head = consume_all(control);
      stalled += head == last_head;
      last_head = head;
    }
  }
  // Per thread; GB adds the threads' items into one rate.
  state.SetItemsProcessed(static_cast<std::int64_t>(n));
  g_run.cpu_ns.fetch_add(thread_cpu_ns() - cpu_before);
  g_run.preemptions.fetch_add(involuntary_switches() - switches_before);
  g_run.polls.fetch_add(n / kConsumeEvery);
  g_run.stalled_polls.fetch_add(stalled);
  g_run.samples.fetch_add(n);
  g_run.finished.fetch_add(1);
  if (me != 0) return;

  while (g_run.finished.load() != threads) sched_yield();
  if (g_run.setup.load() == Setup::kReady) {
    std::uint64_t lost = 0;
    for (int i = 0; i < threads; ++i) lost += g_run.events[i]->lost_samples.load();
    const std::uint64_t samples = g_run.samples.load();
    if (const char* err = check_rings(threads, shared, samples, lost)) {
      state.SkipWithError(err);
    } else {
      // Counters of thread 0 only; GB sums them over threads.
      state.counters["lost"] = static_cast<double>(lost);
      // CPU per sample of one thread, and per sample that reached the ring: a dropped sample is
      // cheaper than a written one, so with losses only the second compares shared with own.
      const double cpu = static_cast<double>(g_run.cpu_ns.load());
      state.counters["cpu_ns_per_sample"] = cpu / static_cast<double>(samples);
      state.counters["cpu_ns_per_written"] =
          samples > lost ? cpu / static_cast<double>(samples - lost) : 0.0;
      state.counters["preemptions"] = static_cast<double>(g_run.preemptions.load());
      // Position wakeups: one per watermark (half the ring) written is what a healthy ring
      // delivers; far more means the write path is making a write(2) per sample.
      std::uint64_t wakeups = 0;
      for (int i = 0; i < threads; ++i) {
        if (!shared || i == 0) wakeups += drain_wakeups(g_run.fds[i]);
      }
      const std::uint64_t watermark = kDataPages * ring::page_size() / 2;
      state.counters["wakeups"] = static_cast<double>(wakeups);
      state.counters["wakeups_expected"] =
          static_cast<double>(bytes_written(threads, shared) / watermark);
      state.counters["lost_pct"] = 100.0 * static_cast<double>(lost) / static_cast<double>(samples);
      // How often the consumer found data_head where it was one poll (256 samples) earlier.
      const double polls = static_cast<double>(std::max<std::uint64_t>(g_run.polls.load(), 1));
      state.counters["stalled_polls_pct"] =
          100.0 * static_cast<double>(g_run.stalled_polls) / polls;
    }
  }
  close_events();
}

void BM_TwoThreads_SharedRing(benchmark::State& state) {
  two_threads(state, true);
}
void BM_TwoThreads_OwnRing(benchmark::State& state) {
  two_threads(state, false);
}

BENCHMARK(BM_TwoThreads_SharedRing)->ArgName("overflow")->Arg(0)->Arg(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_TwoThreads_OwnRing)->ArgName("overflow")->Arg(0)->Arg(1)->Threads(2)->UseRealTime();
// One writer alone, for scale: what each thread would cost without the other.
BENCHMARK(BM_TwoThreads_OwnRing)->ArgName("overflow")->Arg(0)->Arg(1)->Threads(1)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
