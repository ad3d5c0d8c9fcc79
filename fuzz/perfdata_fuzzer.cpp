// perf.data bytes -> perfdata::Reader, and over what it accepts every view `userperf script` and
// `userperf report` make: the script's lines (with the address spaces the records build), the
// profile, the --stdio report with call graphs, the collapsed stacks, the flame graph page and
// the pprof message. A reader that accepted a file promised its views would not overread it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "perfdata/reader.hpp"
#include "report/collapsed_writer.hpp"
#include "report/flamegraph_writer.hpp"
#include "report/pprof_writer.hpp"
#include "report/process_symbols.hpp"
#include "report/profile.hpp"
#include "report/report_printer.hpp"
#include "report/script_printer.hpp"

using namespace userperf;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static std::FILE* const sink = std::fopen("/dev/null", "w");
  auto reader = perfdata::Reader::from_bytes(std::vector<std::uint8_t>(data, data + size));
  if (!reader) return 0;

  report::ProcessSymbols symbols;
  report::ScriptOptions script;
  script.symbols = &symbols;
  (void)report::print_script(**reader, sink, script);

  Expected<report::Profile> profile = report::build_profile(**reader, report::ProfileOptions{});
  if (!profile) return 0;
  report::ReportOptions printing;
  printing.children = report::has_call_chains(*profile);
  printing.call_graph.mode = report::CallGraphMode::kGraph;
  report::print_report(*profile, printing, sink);
  for (std::size_t event = 0; event < profile->events.size(); ++event) {
    (void)report::write_collapsed(*profile, static_cast<int>(event), {}, sink);
    report::PprofOptions pprof;
    pprof.event = static_cast<int>(event);
    (void)report::encode_pprof(*profile, pprof);
  }
  (void)report::write_flamegraph(*profile, {}, sink);
  return 0;
}
