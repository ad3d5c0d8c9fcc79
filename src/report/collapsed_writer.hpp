// Folded stacks ("python3;main;parse;lex 123"): one line per distinct stack, the command first and
// the frames from the outermost caller to the leaf, then the count of samples; lines sorted. This
// is what FlameGraph's stackcollapse scripts (and perf's `perf script report stackcollapse`) write
// and what flamegraph.pl, speedscope and inferno read.
#pragma once

#include <cstdio>
#include <functional>

#include "report/profile.hpp"
#include "support/expected.hpp"

namespace userperf::report {

struct CollapsedOptions {
  std::function<bool(const Stack&)> accept;  // when set, only the stacks it accepts
  bool period = false;  // count the period (ns for cpu-clock) instead of samples
};

Expected<void> write_collapsed(const Profile& profile, int event, const CollapsedOptions& options,
                               std::FILE* out);

}  // namespace userperf::report
