// cli_report_pprof's view of `userperf report`'s numbers: the histogram by symbol (perf's
// --sort sym) of a file's first event with samples, exactly, as
//   total SAMPLES PERIOD
//   SELF_SAMPLES<TAB>SELF<TAB>CHILDREN<TAB>NAME
// one row per symbol, NAME as the pprof file names the function (pprof_function_name).
// Usage: report_hist_dump PERF_DATA
#include <cstdio>

#include "perfdata/reader.hpp"
#include "report/hist.hpp"
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
  report::HistOptions options;
  options.keys = {report::SortKey::kSym};
  for (const report::HistRow& row : report::build_hist(*profile, event, options)) {
    std::printf(
        "%llu\t%llu\t%llu\t%s\n", static_cast<unsigned long long>(row.samples),
        static_cast<unsigned long long>(row.self), static_cast<unsigned long long>(row.children),
        report::pprof_function_name(*profile, profile->locations[row.location].function).c_str());
  }
  return 0;
}
