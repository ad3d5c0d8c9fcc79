// cli_report_pprof's view of `userperf report`'s numbers: the histogram by symbol (perf's
// --sort sym, by function) of a file's first event with samples, exactly, as
//   total SAMPLES PERIOD
//   SELF_SAMPLES<TAB>SELF<TAB>CHILDREN<TAB>NAME
// one row per symbol, NAME as the pprof file names the function (pprof_function_name).
// Usage: report_hist_dump PERF_DATA
#include <cstdint>
#include <cstdio>
#include <vector>

#include "perfdata/reader.hpp"
#include "report/pprof_writer.hpp"
#include "report/profile.hpp"

int main(int argc, char** argv) {
  using namespace userperf;
  if (argc != 2) {
    std::fprintf(stderr, "usage: report_hist_dump PERF_DATA\n");
    return 2;
  }
  auto reader = perfdata::Reader::open(argv[1]);
  if (!reader) {
    std::fprintf(stderr, "report_hist_dump: %s\n", reader.error().message.c_str());
    return 1;
  }
  const auto profile = report::build_profile(**reader, {});
  if (!profile) {
    std::fprintf(stderr, "report_hist_dump: %s\n", profile.error().message.c_str());
    return 1;
  }
  int event = 0;
  while (static_cast<std::size_t>(event) + 1 < profile->events.size() &&
         profile->events[event].samples == 0) {
    ++event;
  }
  const report::EventProfile& e = profile->events[event];
  std::printf("total %llu %llu\n", static_cast<unsigned long long>(e.samples),
              static_cast<unsigned long long>(e.total_period));
  // By Function, as pprof groups: perf's sym key (report::build_hist) gives each address no
  // mapping covers a row of its own, which pprof shows as one "[unknown]".
  struct Row {
    std::uint64_t samples = 0, self = 0, children = 0;
    std::size_t counted_in = SIZE_MAX;  // the last stack its children counted
  };
  std::vector<Row> rows(profile->functions.size());
  for (std::size_t s = 0; s < profile->stacks.size(); ++s) {
    const report::Stack& stack = profile->stacks[s];
    if (stack.event != event) continue;
    const auto frames = profile->frames_of(stack);
    Row& leaf = rows[profile->locations[frames[0]].function];
    leaf.samples += stack.samples;
    leaf.self += stack.period;
    for (report::LocationId location : frames) {
      Row& row = rows[profile->locations[location].function];
      if (row.counted_in == s) continue;
      row.counted_in = s;
      row.children += stack.period;
    }
  }
  for (std::size_t f = 0; f < rows.size(); ++f) {
    if (rows[f].children == 0) continue;
    std::printf("%llu\t%llu\t%llu\t%s\n", static_cast<unsigned long long>(rows[f].samples),
                static_cast<unsigned long long>(rows[f].self),
                static_cast<unsigned long long>(rows[f].children),
                report::pprof_function_name(*profile, static_cast<report::FunctionId>(f)).c_str());
  }
  return 0;
}
