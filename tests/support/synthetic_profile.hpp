// A report::Profile made up for size and speed measurements of the report's views: `stacks`
// distinct call stacks (distinct by function, not only by address, so none merge in a call tree)
// over `samples` samples of cpu-clock at 1 ms, from random walks down a fixed random call graph of
// user functions in 40 shared objects, a third of them ending in kernel frames. Callees are picked
// with a skew (a program's hot paths), so stacks share their outer frames as real ones do.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "report/profile.hpp"

namespace userperf::testing {

inline report::Profile synthetic_profile(std::uint64_t samples, std::size_t stacks,
                                         std::uint32_t seed = 1) {
  report::Profile profile;
  std::mt19937_64 random(seed);
  constexpr std::uint32_t kUserDsos = 40, kUserFunctions = 20000, kKernelFunctions = 2000;
  for (std::uint32_t d = 0; d < kUserDsos; ++d) {
    const std::string name = d == 0 ? "app" : "libsynthetic" + std::to_string(d) + ".so";
    profile.dsos.push_back({"/usr/lib/" + name, name, "", false});
  }
  profile.dsos.push_back({"[kernel.kallsyms]", "[kernel.kallsyms]", "", true});
  const auto add_function = [&](const std::string& name, report::DsoId dso) {
    const auto id = static_cast<report::FunctionId>(profile.functions.size());
    profile.functions.push_back({name, dso, "", 0});
    profile.locations.push_back({dso, 0x1000 + 16ull * id, id, 0});
    return static_cast<report::LocationId>(id);
  };
  std::vector<report::LocationId> user, kernel;
  for (std::uint32_t f = 0; f < kUserFunctions; ++f) {
    user.push_back(
        add_function("ns::component" + std::to_string(f % 97) + "::function_" + std::to_string(f),
                     f < 3 ? 0 : 1 + f % (kUserDsos - 1)));
  }
  for (std::uint32_t f = 0; f < kKernelFunctions; ++f) {
    kernel.push_back(add_function("kernel_function_" + std::to_string(f), kUserDsos));
  }
  // Each function calls 8 others; a walk takes the i-th with weight 1/(i+1)^2.
  const auto callees_of = [&](report::LocationId caller, std::size_t i, std::size_t count) {
    return static_cast<report::LocationId>((caller * 7919ull + i * 104729ull + 13) % count);
  };
  std::discrete_distribution<std::size_t> pick(
      {1.0, 1 / 4.0, 1 / 9.0, 1 / 16.0, 1 / 25.0, 1 / 36.0, 1 / 49.0, 1 / 64.0});
  std::uniform_real_distribution<double> unit(0, 1);
  profile.threads.push_back({1000, 1000, "app"});
  profile.threads.push_back({1000, 1001, "app"});
  profile.events.push_back({"cpu-clock", {}, 0, 0});
  profile.events[0].attr.type = PERF_TYPE_SOFTWARE;
  profile.events[0].attr.config = PERF_COUNT_SW_CPU_CLOCK;

  std::set<std::vector<report::LocationId>> seen;
  std::vector<report::LocationId> path;  // outermost first
  while (seen.size() < stacks) {
    path.assign({user[0], user[1], user[2]});  // _start, __libc_start_main, main
    while (path.size() < 60 && (path.size() < 6 || unit(random) > 1 / 10.0)) {
      path.push_back(user[callees_of(path.back(), pick(random), kUserFunctions)]);
    }
    if (unit(random) < 1 / 3.0) {
      report::LocationId k = kernel[pick(random)];
      path.push_back(k);
      while (path.size() < 127 && unit(random) > 1 / 5.0) {
        k = kernel[callees_of(k, pick(random), kKernelFunctions)];
        path.push_back(k);
      }
    }
    if (!seen.insert(path).second) continue;
    report::Stack stack;
    stack.thread = static_cast<report::ThreadId>(seen.size() % 2);
    stack.first = static_cast<std::uint32_t>(profile.frames.size());
    stack.depth = static_cast<std::uint32_t>(path.size());
    profile.frames.insert(profile.frames.end(), path.rbegin(), path.rend());  // leaf first
    stack.samples = 1;
    profile.stacks.push_back(stack);
  }
  // Every stack has a sample; the rest go to stacks by a long-tailed weight.
  std::vector<double> weights;
  for (std::size_t i = 0; i < profile.stacks.size(); ++i) weights.push_back(1.0 / (1.0 + i * 0.05));
  std::discrete_distribution<std::size_t> stack_of(weights.begin(), weights.end());
  for (std::uint64_t s = profile.stacks.size(); s < samples; ++s)
    ++profile.stacks[stack_of(random)].samples;
  for (report::Stack& stack : profile.stacks) {
    stack.period = stack.samples * 1000000;
    profile.events[0].samples += stack.samples;
    profile.events[0].total_period += stack.period;
  }
  return profile;
}

}  // namespace userperf::testing
