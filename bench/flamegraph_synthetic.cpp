// Writes the flame graph page of a synthetic profile (tests/support/synthetic_profile.hpp) for the
// page's size check (tests/integration/flamegraph_browser_test.js) and its time to be drawn
// (bench/flamegraph_page_bench.js).
// With --diff, the differential page of two such profiles (random walks of other seeds down the
// same call graph): the new one's frames colored by the change from the base.
// Usage: flamegraph_synthetic OUTPUT.html [SAMPLES [STACKS [--diff]]]
//        (default 1,000,000 samples and 100,000 stacks)
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "report/flamegraph_writer.hpp"
#include "report/output_file.hpp"
#include "support/synthetic_profile.hpp"

namespace {

double cpu_ms() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUTPUT.html [SAMPLES [STACKS]]\n", argv[0]);
    return 2;
  }
  const std::uint64_t samples = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000000;
  const std::size_t stacks = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 100000;
  const bool diff = argc > 4 && std::string(argv[4]) == "--diff";
  const auto profile = userperf::testing::synthetic_profile(samples, stacks);
  const auto base =
      diff ? userperf::testing::synthetic_profile(samples, stacks, 2) : userperf::report::Profile{};
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = cpu_ms();
  userperf::report::FlamegraphOptions options;
  options.subtitle = "synthetic: " + std::to_string(samples) + " samples, " +
                     std::to_string(stacks) + " distinct stacks";
  const auto written = userperf::report::write_output_file(argv[1], [&](std::FILE* out) {
    return diff ? userperf::report::write_diff_flamegraph(base, profile, options, out)
                : userperf::report::write_flamegraph(profile, options, out);
  });
  if (!written) {
    std::fprintf(stderr, "flamegraph_synthetic: %s\n", written.error().message.c_str());
    return 1;
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  // The CPU time too: on a loaded machine the wall time says little.
  std::fprintf(stderr,
               "flamegraph_synthetic: %s: %llu samples, %zu stacks, written in %.0f ms (%.0f ms of "
               "CPU)\n",
               argv[1], static_cast<unsigned long long>(samples), profile.stacks.size(), ms,
               cpu_ms() - cpu_start);
  return 0;
}
