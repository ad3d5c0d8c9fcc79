// The text of `userperf report --stdio`: per event, perf report's header ("# Samples: N of event
// 'E'", "# Event count (approx.): P") and two tables of "children% self% command shared-object
// symbol" rows — the top symbols by children (inclusive) and by self — each sorted, at most
// `top_rows` rows. "[.]" marks user symbols, "[k]" kernel ones, as perf does.
#pragma once

#include <cstdio>

#include "report/hist.hpp"
#include "report/profile.hpp"

namespace userperf::report {

struct ReportOptions {
  std::size_t top_rows = 30;
};

void print_report(const Profile& profile, const ReportOptions& options, std::FILE* out);

}  // namespace userperf::report
