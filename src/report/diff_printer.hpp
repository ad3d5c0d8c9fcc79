// The text of `userperf report --diff BASE NEW`: perf diff's table (its default compute, delta-abs,
// and sort keys, dso,sym). Per event of BASE that NEW has too (by name), "# Event 'E'" and rows of
// "Baseline  Delta Abs  Shared Object  Symbol": a symbol's self share in BASE and its share in NEW
// minus that, ordered by the size of the change. Symbols are matched by report/profile_match.
#pragma once

#include <cstdio>

#include "report/profile.hpp"
#include "report/profile_filter.hpp"

namespace userperf::report {

struct DiffOptions {
  FilterOptions filters;     // applied to both files
  std::size_t top_rows = 0;  // at most this many rows per event; 0: all
};

void print_diff(const Profile& base, const Profile& next, const DiffOptions& options,
                std::FILE* out);

}  // namespace userperf::report
