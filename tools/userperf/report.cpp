// `userperf report [-i FILE] [--stdio]`: a perf.data file's samples as top-symbol tables by
// children and self (report/profile, report/report_printer). Text is the only output: --stdio is
// accepted for perf's command lines and changes nothing.
#include <cstdio>

#include "commands.hpp"
#include "perfdata/reader.hpp"
#include "report/profile.hpp"
#include "report/report_printer.hpp"

namespace userperf::cli {

void add_report_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("report", "show where a perf.data file's samples were taken");
  auto input = std::make_shared<std::string>("perf.data");
  auto stdio = std::make_shared<bool>(false);
  auto top = std::make_shared<std::size_t>(30);
  auto max_stack = std::make_shared<std::size_t>(127);
  cmd->add_option("-i,--input", *input, "perf.data file to read")->capture_default_str();
  cmd->add_flag("--stdio", *stdio, "text output (the only kind; accepted as perf does)");
  cmd->add_option("--top", *top, "rows per table")->capture_default_str();
  cmd->add_option("--max-stack", *max_stack, "frames of a call chain looked at")
      ->capture_default_str();
  cmd->callback([input, top, max_stack, &exit_code] {
    auto reader = perfdata::Reader::open(*input);
    if (!reader) {
      std::fprintf(stderr, "userperf report: %s\n", reader.error().message.c_str());
      exit_code = 1;
      return;
    }
    report::ProfileOptions options;
    options.max_frames = *max_stack;
    const Expected<report::Profile> profile = report::build_profile(**reader, options);
    if (!profile) {
      std::fprintf(stderr, "userperf report: %s: %s\n", input->c_str(),
                   profile.error().message.c_str());
      exit_code = 1;
      return;
    }
    report::ReportOptions printing;
    printing.top_rows = *top;
    report::print_report(*profile, printing, stdout);
  });
}

}  // namespace userperf::cli
