// perf report's histogram: one event's samples summed per sort key (perf's --sort: comm, pid, dso,
// sym, in any combination; default comm,dso,sym). `self` is the period of the samples whose leaf
// has the key, `children` the period of the samples with the key anywhere in their stack (once per
// sample), as perf report's two columns.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "report/profile.hpp"

namespace userperf::report {

enum class SortKey { kComm, kPid, kDso, kSym };

struct HistRow {
  ThreadId thread = 0;      // a thread of the row (its command and pid when those are keys)
  LocationId location = 0;  // a location of the row (its dso and function when those are keys)
  std::uint64_t self = 0;
  std::uint64_t children = 0;
  std::uint64_t samples = 0;  // samples whose leaf has the key
};

struct HistOptions {
  std::vector<SortKey> keys{SortKey::kComm, SortKey::kDso, SortKey::kSym};
  std::function<bool(const Stack&)> accept;  // when set, only the stacks it accepts count
};

// Rows in no particular order.
std::vector<HistRow> build_hist(const Profile& profile, int event, const HistOptions& options);

}  // namespace userperf::report
