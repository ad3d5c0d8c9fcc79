// The text of `userperf report` (--stdio): perf report --stdio's output. Per event with samples,
// perf's header ("# Samples: 2K of event 'cpu-clock'", "# Event count (approx.): P") and one table
// of entries by the sort keys — "Children Self" columns with --children, "Overhead" without —
// each entry followed by its call graph (report/callchain_printer) when one is asked for. "[.]"
// marks user symbols, "[k]" kernel ones, as perf does.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "report/callchain_printer.hpp"
#include "report/hist.hpp"
#include "report/profile.hpp"
#include "report/profile_filter.hpp"

namespace userperf::report {

struct ReportOptions {
  std::vector<SortKey> keys{SortKey::kComm, SortKey::kDso, SortKey::kSym};
  bool children = false;  // perf's --children: a Children column, rows ordered by it
  CallGraphOptions call_graph{CallGraphMode::kNone, 0.5, CallOrder::kCallee};
  double percent_limit = 0;  // rows below this share (children's with --children) are not shown
  std::size_t top_rows = 0;  // at most this many rows per event; 0: all
  // Stacks counted (perf's --comm, --pid, --tid, --dso, --symbols). Percentages are of the
  // event's whole period, or with `relative` (perf's --percentage relative) of what the filters
  // keep, the header's sample count and event count too: what perf 6.1 does (its default is
  // absolute, whatever its manual says).
  FilterOptions filters;
  bool relative = false;
};

void print_report(const Profile& profile, const ReportOptions& options, std::FILE* out);

// perf's "# Samples: N" count: over 1000 it is shown in K (then M, G), truncated: "2K".
std::string sample_count_text(std::uint64_t samples);

// perf's defaults for a profile: call graphs (graph,0.5) and --children when the file has call
// chains, caller order with --children and callee order without.
bool has_call_chains(const Profile& profile);

}  // namespace userperf::report
