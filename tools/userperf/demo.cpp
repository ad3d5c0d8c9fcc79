// `userperf demo`: a self-profile through the public API, the way a profiler uses the kernel's.
// A task-clock event samples this thread while it runs three functions that take 60%, 30% and 10%
// of its CPU time; the ring is drained with ring::Reader between slices of work, and the report
// compares the PERIOD-weighted share of each function with the share it was given.
#include <linux/perf_event.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <system_error>
#include <vector>

#include "abi/sample_parser.hpp"
#include "commands.hpp"
#include "ring/reader.hpp"
#include "symbolizer.hpp"
#include "userperf/userperf.hpp"

namespace userperf::cli {
namespace {

struct DemoOptions {
  unsigned ms = 400;               // CPU time the workload burns
  std::uint64_t period_us = 1000;  // sample period in task-clock microseconds
  std::size_t pages = 16;          // data pages of the ring
};

std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

volatile std::uint64_t g_sink;

// Burns `ns` of this thread's CPU time. Each workload function calls it with its own share, so
// the time is spent inside that function's frame (noinline keeps the frames distinct).
__attribute__((noinline)) void spin_for(std::uint64_t ns) {
  const std::uint64_t end = thread_cpu_ns() + ns;
  while (thread_cpu_ns() < end) {
    for (int i = 0; i < 2000; ++i) g_sink = g_sink * 31 + static_cast<std::uint64_t>(i);
  }
}

}  // namespace

// Exported (not in the anonymous namespace) so dladdr can name them in the report. The empty asm
// after each call keeps it a call, not a tail jump, so the function has a frame to be found in.
__attribute__((noinline)) void demo_parse_input(std::uint64_t ns) {
  spin_for(ns);
  asm volatile("" ::: "memory");
}
__attribute__((noinline)) void demo_compute(std::uint64_t ns) {
  spin_for(ns);
  asm volatile("" ::: "memory");
}
__attribute__((noinline)) void demo_write_output(std::uint64_t ns) {
  spin_for(ns);
  asm volatile("" ::: "memory");
}

namespace {

struct Tally {
  std::uint64_t samples = 0;
  std::uint64_t records = 0;
  std::uint64_t lost = 0;
  std::uint64_t period_total = 0;
  std::map<std::string, std::uint64_t> period_by_function;  // by the innermost demo_* frame
};

// The caller of spin_for: the first callchain entry after the user-context marker and the ip
// that names one of the workload functions.
std::string attribute(const std::uint64_t* chain, std::uint64_t nr) {
  for (std::uint64_t i = 0; i < nr; ++i) {
    if (chain[i] >= PERF_CONTEXT_MAX) continue;  // context markers
    std::string name = symbol_name(chain[i]);
    if (name.rfind("userperf::cli::demo_", 0) == 0) {
      const std::size_t start = sizeof("userperf::cli::") - 1;
      return name.substr(start, name.find('(') - start);
    }
  }
  return "(elsewhere)";
}

// Every record of the ring, consumed; samples are decoded with abi::parse_sample, as any consumer
// of a perf ring should.
bool drain(const Mapping& mapping, const abi::SampleFormat& format, Tally& tally) {
  ring::RingView view;
  if (ring::make_ring_view(mapping.control(), mapping.length(), view) != ring::ReadStatus::kOk) {
    std::fprintf(stderr, "demo: the control page does not describe a data area\n");
    return false;
  }
  ring::Reader reader(view);
  abi::ParsedSample sample;
  abi::ParseStatus parsed;
  const ring::ReadStatus status = ring::drain(reader, [&](const ring::Record& r) {
    ++tally.records;
    if (r.header.type != PERF_RECORD_SAMPLE) return true;
    parsed = abi::parse_sample(r.bytes, format, sample);
    if (!parsed.ok()) return false;
    ++tally.samples;
    tally.period_total += sample.period;
    tally.period_by_function[attribute(sample.callchain.data(), sample.callchain.size())] +=
        sample.period;
    return true;
  });
  if (!parsed.ok()) {
    std::fprintf(stderr, "demo: a sample does not parse: %s at byte %u\n",
                 abi::to_string(parsed.error), parsed.offset);
    return false;
  }
  if (status != ring::ReadStatus::kEmpty) {
    std::fprintf(stderr, "demo: reading the ring failed: %s\n", ring::to_string(status));
    return false;
  }
  tally.lost += reader.lost();
  return true;
}

int run_demo(const DemoOptions& options) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = options.period_us * 1000;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
                     PERF_SAMPLE_CALLCHAIN;
  attr.disabled = 1;
  attr.exclude_kernel = 1;

  const abi::SampleFormat format = abi::SampleFormat::from_attr(attr);
  Tally tally;
  std::uint64_t cpu_used = 0;
  try {
    Event event(attr);
    Mapping mapping(event, options.pages);
    // Rounds of 5 to 15 ms of CPU, then a drain. CPU-time timers expire on scheduler ticks, so
    // rounds of one fixed length would alias with the tick and always sample the same phases.
    event.enable();
    const std::uint64_t cpu_start = thread_cpu_ns();
    const std::uint64_t budget = std::uint64_t{options.ms} * 1'000'000;
    std::uint64_t random = 0x9e3779b97f4a7c15;
    for (std::uint64_t spent = 0; spent < budget;) {
      random = random * 6364136223846793005u + 1442695040888963407u;
      const std::uint64_t slice = std::min(budget - spent, 5'000'000 + (random >> 33) % 10'000'000);
      spent += slice;
      demo_parse_input(slice * 3 / 10);
      demo_compute(slice * 6 / 10);
      demo_write_output(slice * 1 / 10);
      if (!drain(mapping, format, tally)) return 1;
    }
    event.disable();
    cpu_used = thread_cpu_ns() - cpu_start;
    if (!drain(mapping, format, tally)) return 1;
  } catch (const std::system_error& e) {
    std::fprintf(stderr, "demo: %s\n", e.what());
    return 1;
  }

  std::printf("userperf demo: task-clock on this thread, period %llu us, ring 1+%zu pages\n",
              static_cast<unsigned long long>(options.period_us), options.pages);
  std::printf(
      "  records %llu, samples %llu, lost %llu\n", static_cast<unsigned long long>(tally.records),
      static_cast<unsigned long long>(tally.samples), static_cast<unsigned long long>(tally.lost));
  std::printf("  sum of PERIOD %.1f ms, thread CPU time %.1f ms\n", tally.period_total / 1e6,
              cpu_used / 1e6);
  if (tally.samples == 0 || tally.period_total == 0) {
    std::fprintf(stderr, "demo: no samples were written\n");
    return 1;
  }
  const std::map<std::string, int> expected{
      {"demo_compute", 60}, {"demo_parse_input", 30}, {"demo_write_output", 10}};
  std::printf("  %-20s %8s %8s   (share: PERIOD-weighted samples; given: the CPU split)\n",
              "function", "share", "given");
  std::vector<std::pair<std::uint64_t, std::string>> rows;
  for (const auto& [name, period] : tally.period_by_function) rows.emplace_back(period, name);
  std::sort(rows.rbegin(), rows.rend());
  for (const auto& [period, name] : rows) {
    const auto it = expected.find(name);
    std::printf("  %-20s %7.1f%% %7s\n", name.c_str(), 100.0 * period / tally.period_total,
                it != expected.end() ? (std::to_string(it->second) + "%").c_str() : "-");
  }
  return 0;
}

}  // namespace

void add_demo_command(CLI::App& app, int& exit_code) {
  static DemoOptions options;
  CLI::App* demo = app.add_subcommand(
      "demo", "sample this process with a userperf task-clock event and report where it ran");
  demo->add_option("--ms", options.ms, "CPU milliseconds of workload")
      ->check(CLI::Range(10u, 60'000u));
  demo->add_option("--period-us", options.period_us, "sample period in microseconds of CPU time")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000}));
  demo->add_option("--pages", options.pages, "data pages of the ring (a power of two)");
  demo->callback([&exit_code] { exit_code = run_demo(options); });
}

}  // namespace userperf::cli
