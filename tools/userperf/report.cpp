// `userperf report [-i FILE] [--stdio] [--format=FORMAT -o FILE]`: a perf.data file's samples as
// perf report's tables (report/report_printer), or as folded stacks (report/collapsed_writer).
// Every format reads the one Profile of merged stacks (report/profile).
#include <unistd.h>

#include <cstdio>

#include "commands.hpp"
#include "perfdata/reader.hpp"
#include "report/collapsed_writer.hpp"
#include "report/flamegraph_writer.hpp"
#include "report/output_file.hpp"
#include "report/pprof_writer.hpp"
#include "report/profile.hpp"
#include "report/report_printer.hpp"

namespace userperf::cli {

namespace {

struct ReportArgs {
  std::string input = "perf.data";
  std::string format = "stdio";
  std::string output = "-";
  std::size_t top = 30;
  std::size_t max_stack = 127;
  bool stdio = false;
};

// The first event with samples: the one a single-event format shows.
int first_sampled_event(const report::Profile& profile) {
  for (std::size_t i = 0; i < profile.events.size(); ++i) {
    if (profile.events[i].samples != 0) return static_cast<int>(i);
  }
  return 0;
}

int run_report(const ReportArgs& args) {
  auto reader = perfdata::Reader::open(args.input);
  if (!reader) {
    std::fprintf(stderr, "userperf report: %s\n", reader.error().message.c_str());
    return 1;
  }
  report::ProfileOptions options;
  options.max_frames = args.max_stack;
  options.lines = args.format == "pprof";  // pprof's Line and Function file and line
  // perf's progress line: after 2 s, on a terminal only, overwritten in place.
  const bool terminal = isatty(STDERR_FILENO) == 1;
  bool progressed = false;
  options.on_progress = [&](std::uint64_t done, std::uint64_t total) {
    if (!terminal) return;
    progressed = true;
    std::fprintf(
        stderr, "\ruserperf report: processing %s: %3.0f%%", args.input.c_str(),
        total == 0 ? 100.0 : 100.0 * static_cast<double>(done) / static_cast<double>(total));
  };
  const Expected<report::Profile> profile = report::build_profile(**reader, options);
  if (progressed) std::fprintf(stderr, "\r\033[K");
  if (!profile) {
    std::fprintf(stderr, "userperf report: %s: %s\n", args.input.c_str(),
                 profile.error().message.c_str());
    return 1;
  }
  Expected<void> written;
  if (args.format == "stdio") {
    report::ReportOptions printing;
    printing.top_rows = args.top;
    written = report::write_output_file(args.output, [&](std::FILE* out) -> Expected<void> {
      report::print_report(*profile, printing, out);
      return {};
    });
  } else if (args.format == "collapsed") {
    written = report::write_output_file(args.output, [&](std::FILE* out) {
      return report::write_collapsed(*profile, first_sampled_event(*profile), {}, out);
    });
  } else if (args.format == "pprof") {
    // One event per pprof file (one set of sample types); the others are named on stderr.
    report::PprofOptions pprof;
    pprof.event = first_sampled_event(*profile);
    pprof.source = args.input;
    for (std::size_t i = 0; i < profile->events.size(); ++i) {
      if (static_cast<int>(i) != pprof.event && profile->events[i].samples != 0) {
        std::fprintf(stderr, "userperf report: pprof: writing event %s only, not %s\n",
                     profile->events[pprof.event].name.c_str(), profile->events[i].name.c_str());
      }
    }
    written = report::write_output_file(
        args.output, [&](std::FILE* out) { return report::write_pprof(*profile, pprof, out); });
  } else if (args.format == "flamegraph") {
    report::FlamegraphOptions page;
    page.subtitle = args.input;
    written = report::write_output_file(
        args.output, [&](std::FILE* out) { return report::write_flamegraph(*profile, page, out); });
  }
  if (!written) {
    std::fprintf(stderr, "userperf report: %s\n", written.error().message.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("report", "show where a perf.data file's samples were taken");
  auto args = std::make_shared<ReportArgs>();
  cmd->add_option("-i,--input", args->input, "perf.data file to read")->capture_default_str();
  cmd->add_flag("--stdio", args->stdio, "text output (the default format; accepted as perf does)");
  cmd->add_option(
         "--format", args->format,
         "stdio (perf report's tables), collapsed (folded stacks), pprof (gzipped profile.proto) "
         "or flamegraph (an HTML page)")
      ->check(CLI::IsMember({"stdio", "collapsed", "pprof", "flamegraph"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", args->output, "file to write (- for stdout), replaced whole")
      ->capture_default_str();
  cmd->add_option("--top", args->top, "rows per table")->capture_default_str();
  cmd->add_option("--max-stack", args->max_stack, "frames of a call chain looked at")
      ->capture_default_str();
  cmd->callback([args, &exit_code] { exit_code = run_report(*args); });
}

}  // namespace userperf::cli
