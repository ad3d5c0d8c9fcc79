// `userperf report [-i FILE] [--format=FORMAT] [-o FILE] [perf report's options]`: a perf.data
// file's samples as perf report --stdio prints them (report/report_printer, with call graphs,
// sort keys and filters), as folded stacks (report/collapsed_writer), or as `perf diff`'s table of
// two files (--diff BASE NEW). Every format reads the one Profile of merged stacks
// (report/profile) and counts the stacks the one filter accepts (report/profile_filter).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>

#include "commands.hpp"
#include "perfdata/reader.hpp"
#include "report/collapsed_writer.hpp"
#include "report/diff_printer.hpp"
#include "report/flamegraph_writer.hpp"
#include "report/output_file.hpp"
#include "report/pprof_writer.hpp"
#include "report/profile.hpp"
#include "report/profile_filter.hpp"
#include "report/report_printer.hpp"

namespace userperf::cli {

namespace {

struct ReportArgs {
  std::string input = "perf.data";
  std::string format = "stdio";
  std::string output = "-";
  std::size_t top = 0;
  std::size_t max_stack = 127;
  bool stdio = false;
  // perf report's options; empty strings and -1 flags mean "perf's default for this file".
  std::string call_graph;
  bool call_graph_given = false;
  int children = -1;  // --children 1, --no-children 0
  std::string sort = "comm,dso,sym";
  std::string comms, pids, tids, dsos, symbols;
  double percent_limit = 0;
  std::string percentage = "absolute";
  std::vector<std::string> diff;  // BASE NEW
};

// What every format is given: the profile, the stacks the filter options accept, the event a
// single-event format shows.
struct ReportInput {
  const report::Profile& profile;
  const report::FilterOptions& filters;
  const report::ProfileFilter& filter;
  int event;  // the first event with samples
};

int first_sampled_event(const report::Profile& profile) {
  for (std::size_t i = 0; i < profile.events.size(); ++i) {
    if (profile.events[i].samples != 0) return static_cast<int>(i);
  }
  return 0;
}

Expected<std::vector<report::SortKey>> parse_sort_keys(const std::string& list) {
  std::vector<report::SortKey> keys;
  for (const std::string& name : report::split_list(list)) {
    if (name == "comm") {
      keys.push_back(report::SortKey::kComm);
    } else if (name == "pid") {
      keys.push_back(report::SortKey::kPid);
    } else if (name == "dso") {
      keys.push_back(report::SortKey::kDso);
    } else if (name == "sym") {
      keys.push_back(report::SortKey::kSym);
    } else {
      return Error{EINVAL, "unknown --sort key '" + name + "' (comm, pid, dso, sym)"};
    }
  }
  if (keys.empty()) return Error{EINVAL, "--sort needs a key (comm, pid, dso, sym)"};
  return keys;
}

// perf's --call-graph value: any of a mode (graph, fractal, flat, folded, none), an order (caller,
// callee), a threshold (the first number; a second, perf's print limit, is accepted and ignored),
// the key "function" and the value "percent" (perf's defaults; the others are refused).
Expected<void> parse_call_graph(const std::string& value, report::CallGraphOptions& options,
                                bool& threshold_given) {
  for (const std::string& item : report::split_list(value)) {
    if (item == "graph") {
      options.mode = report::CallGraphMode::kGraph;
    } else if (item == "fractal") {
      options.mode = report::CallGraphMode::kFractal;
    } else if (item == "flat") {
      options.mode = report::CallGraphMode::kFlat;
    } else if (item == "folded") {
      options.mode = report::CallGraphMode::kFolded;
    } else if (item == "none") {
      options.mode = report::CallGraphMode::kNone;
    } else if (item == "caller" || item == "callee") {
      options.order = item == "caller" ? report::CallOrder::kCaller : report::CallOrder::kCallee;
    } else if (item == "function" || item == "percent") {
    } else {
      char* end = nullptr;
      const double number = std::strtod(item.c_str(), &end);
      if (end == item.c_str() || *end != '\0') {
        return Error{EINVAL, "--call-graph: unknown item '" + item + "'"};
      }
      if (!threshold_given) options.threshold = number;
      threshold_given = true;
    }
  }
  return {};
}

Expected<report::FilterOptions> filter_options(const ReportArgs& args) {
  report::FilterOptions filters;
  filters.comms = report::split_list(args.comms);
  filters.dsos = report::split_list(args.dsos);
  filters.symbols = report::split_list(args.symbols);
  for (auto [list, ids] : {std::pair{&args.pids, &filters.pids}, {&args.tids, &filters.tids}}) {
    for (const std::string& item : report::split_list(*list)) {
      char* end = nullptr;
      const unsigned long id = std::strtoul(item.c_str(), &end, 10);
      if (end == item.c_str() || *end != '\0')
        return Error{EINVAL, "not a task id: '" + item + "'"};
      ids->push_back(static_cast<std::uint32_t>(id));
    }
  }
  return filters;
}

Expected<void> write_stdio(const ReportArgs& args, const ReportInput& input) {
  report::ReportOptions printing;
  auto keys = parse_sort_keys(args.sort);
  if (!keys) return keys.error();
  printing.keys = *keys;
  const bool chains = report::has_call_chains(input.profile);
  printing.children = args.children < 0 ? chains : args.children == 1;
  // perf's default graph: graph,0.5, caller order with --children and callee without.
  printing.call_graph.mode = chains ? report::CallGraphMode::kGraph : report::CallGraphMode::kNone;
  printing.call_graph.order =
      printing.children ? report::CallOrder::kCaller : report::CallOrder::kCallee;
  bool threshold_given = false;
  if (args.call_graph_given) {
    if (auto parsed = parse_call_graph(args.call_graph, printing.call_graph, threshold_given);
        !parsed) {
      return parsed.error();
    }
    if (!chains) printing.call_graph.mode = report::CallGraphMode::kNone;
  }
  printing.percent_limit = args.percent_limit;
  // perf's --percent-limit is the call graphs' threshold too, unless -g names one.
  if (args.percent_limit > 0 && !threshold_given)
    printing.call_graph.threshold = args.percent_limit;
  printing.top_rows = args.top;
  printing.filters = input.filters;
  printing.relative = args.percentage == "relative";
  return report::write_output_file(args.output, [&](std::FILE* out) -> Expected<void> {
    report::print_report(input.profile, printing, out);
    return {};
  });
}

// A file read into the model, with perf's progress line (after 2 s, on a terminal only,
// overwritten in place); errors are said on stderr.
std::optional<report::Profile> load_profile(const std::string& path, const ReportArgs& args) {
  auto reader = perfdata::Reader::open(path);
  if (!reader) {
    std::fprintf(stderr, "userperf report: %s\n", reader.error().message.c_str());
    return std::nullopt;
  }
  report::ProfileOptions options;
  options.max_frames = args.max_stack;
  options.lines = args.format == "pprof";  // pprof's Line and Function file and line
  const bool terminal = isatty(STDERR_FILENO) == 1;
  bool progressed = false;
  options.on_progress = [&](std::uint64_t done, std::uint64_t total) {
    if (!terminal) return;
    progressed = true;
    std::fprintf(
        stderr, "\ruserperf report: processing %s: %3.0f%%", path.c_str(),
        total == 0 ? 100.0 : 100.0 * static_cast<double>(done) / static_cast<double>(total));
  };
  Expected<report::Profile> profile = report::build_profile(**reader, options);
  if (progressed) std::fprintf(stderr, "\r\033[K");
  if (!profile) {
    std::fprintf(stderr, "userperf report: %s: %s\n", path.c_str(),
                 profile.error().message.c_str());
    return std::nullopt;
  }
  if (!profile->unfinished.empty()) {
    std::fprintf(stderr, "userperf report: %s: %s\n", path.c_str(), profile->unfinished.c_str());
  }
  for (const std::string& note : profile->notes) {
    std::fprintf(stderr, "userperf report: %s\n", note.c_str());
  }
  return std::move(*profile);
}

int report_error(const Error& error) {
  std::fprintf(stderr, "userperf report: %s\n", error.message.c_str());
  return 1;
}

int run_diff(const ReportArgs& args) {
  const Expected<report::FilterOptions> filters = filter_options(args);
  if (!filters) return report_error(filters.error());
  const std::optional<report::Profile> base = load_profile(args.diff[0], args);
  if (!base) return 1;
  const std::optional<report::Profile> next = load_profile(args.diff[1], args);
  if (!next) return 1;
  if (args.format == "flamegraph") {
    // Frames sized by NEW, colored by the change of their share since BASE.
    const report::ProfileFilter base_filter(*base, *filters), next_filter(*next, *filters);
    report::FlamegraphOptions page;
    page.title = "Differential Flame Graph";
    page.subtitle = args.diff[0] + " -> " + args.diff[1];
    page.accept = next_filter.predicate();
    page.accept_before = base_filter.predicate();
    const Expected<void> written = report::write_output_file(args.output, [&](std::FILE* out) {
      return report::write_diff_flamegraph(*base, *next, page, out);
    });
    return written ? 0 : report_error(written.error());
  }
  if (args.format != "stdio") {
    return report_error(
        Error{EINVAL, "--diff writes stdio (perf diff's table) or flamegraph, not " + args.format});
  }
  report::DiffOptions options;
  options.filters = *filters;
  options.top_rows = args.top;
  const Expected<void> written =
      report::write_output_file(args.output, [&](std::FILE* out) -> Expected<void> {
        report::print_diff(*base, *next, options, out);
        return {};
      });
  return written ? 0 : report_error(written.error());
}

int run_report(const ReportArgs& args) {
  if (!args.diff.empty()) return run_diff(args);
  const std::optional<report::Profile> profile = load_profile(args.input, args);
  if (!profile) return 1;
  const Expected<report::FilterOptions> filters = filter_options(args);
  if (!filters) return report_error(filters.error());
  const report::ProfileFilter filter(*profile, *filters);
  const ReportInput input{*profile, *filters, filter, first_sampled_event(*profile)};
  // One case per format; each applies input.filter.
  Expected<void> written;
  if (args.format == "stdio") {
    written = write_stdio(args, input);
  } else if (args.format == "collapsed") {
    report::CollapsedOptions collapsed;
    collapsed.accept = input.filter.predicate();
    written = report::write_output_file(args.output, [&](std::FILE* out) {
      return report::write_collapsed(input.profile, input.event, collapsed, out);
    });
  } else if (args.format == "pprof") {
    // One event per pprof file (one set of sample types); the others are named on stderr.
    report::PprofOptions pprof;
    pprof.event = input.event;
    pprof.accept = input.filter.predicate();
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
    page.accept = input.filter.predicate();
    written = report::write_output_file(
        args.output, [&](std::FILE* out) { return report::write_flamegraph(*profile, page, out); });
  }
  return written ? 0 : report_error(written.error());
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
  cmd->add_option("--top", args->top, "at most this many entries per event (0: all)")
      ->capture_default_str();
  cmd->add_option("--max-stack", args->max_stack, "frames of a call chain looked at")
      ->capture_default_str();
  cmd->add_option_function<std::string>(
         "-g,--call-graph",
         [args](const std::string& value) {
           args->call_graph = value;
           args->call_graph_given = true;
         },
         "graph|fractal|flat|folded|none,THRESHOLD,caller|callee (perf's default when the file "
         "has call chains: graph,0.5,caller with --children, callee without)")
      ->expected(0, 1)
      ->default_str("graph");
  cmd->add_flag_function(
      "--children,!--no-children",
      [args](std::int64_t count) { args->children = count > 0 ? 1 : 0; },
      "add the period of callees to callers (Children column; perf's default with call chains)");
  cmd->add_option("-s,--sort", args->sort, "sort keys, a comma list of comm, pid, dso, sym")
      ->capture_default_str();
  cmd->add_option("--comm", args->comms, "only these commands (comma list)");
  cmd->add_option("--pid", args->pids, "only these process ids (comma list)");
  cmd->add_option("--tid", args->tids, "only these thread ids (comma list)");
  cmd->add_option("-d,--dso", args->dsos, "only samples in these shared objects (comma list)");
  cmd->add_option("--symbols", args->symbols, "only samples in these symbols (comma list)");
  cmd->add_option("--percent-limit", args->percent_limit, "hide entries below this share");
  cmd->add_option("--percentage", args->percentage,
                  "absolute: shares of the whole event; relative: of what the filters keep")
      ->check(CLI::IsMember({"relative", "absolute"}))
      ->capture_default_str();
  cmd->add_option("--diff", args->diff,
                  "BASE NEW: perf diff's table of the two files' symbols (shares and changes)")
      ->expected(2);
  cmd->callback([args, &exit_code] { exit_code = run_report(*args); });
}

}  // namespace userperf::cli
