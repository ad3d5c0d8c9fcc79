// The flame graph page of `userperf report --format=flamegraph`: one self-contained HTML file (the
// page's script and style inline, no network) drawing each event's caller-first CallTree on a
// canvas, with zoom, regex search, tooltips, colors by kind or shared object, and a reverse
// (callee-first) view the page derives from the same tree. The differential page sizes frames by
// a NEW profile and colors them by the change of their share from a BASE profile.
//
// The data is one JSON object inside the page: a string table, a frame table (name, dso, kind) and
// per event the tree in pre-order as columns: frame, ascend (levels up from the previous node
// before descending one), self samples and self period (divided by the event's period unit, the gcd
// of all periods), each column one string of base-32 variable-length numbers, the mostly-zero ones
// (all but frame) as (zeros skipped, value) pairs (flamegraph_writer.cpp). Totals, positions and
// the reverse tree are computed by the page.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include "report/profile.hpp"
#include "support/expected.hpp"

namespace userperf::report {

struct FlamegraphOptions {
  std::string title = "Flame Graph";
  std::string subtitle;                      // e.g. the input file's name
  std::function<bool(const Stack&)> accept;  // when set, only the stacks it accepts
  // A differential page's filter of the `before` profile (a filter is made for one profile).
  std::function<bool(const Stack&)> accept_before;
};

// Every event of `profile` with samples, a selector between them when there are several.
Expected<void> write_flamegraph(const Profile& profile, const FlamegraphOptions& options,
                                std::FILE* out);

// Frames sized by `after`, colored by the change of their share of their event (same event name
// in `before`): red grew, blue shrank. Frames only `before` has are carried with no width so that
// the reverse view's shares stay exact.
Expected<void> write_diff_flamegraph(const Profile& before, const Profile& after,
                                     const FlamegraphOptions& options, std::FILE* out);

// The page's data object alone (what write_flamegraph embeds): for tests.
std::string flamegraph_json(const Profile& profile, const FlamegraphOptions& options);
std::string diff_flamegraph_json(const Profile& before, const Profile& after,
                                 const FlamegraphOptions& options);

}  // namespace userperf::report
