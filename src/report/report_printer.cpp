#include "report/report_printer.hpp"

#include <algorithm>
#include <cinttypes>
#include <optional>
#include <string>

namespace userperf::report {

namespace {

double percent(std::uint64_t part, std::uint64_t total) {
  return total == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(total);
}

// A sort key's column: perf's header and the text of a row.
struct Column {
  SortKey key;
  std::string header;
  std::size_t width;
};

std::string cell(const Profile& profile, SortKey key, const HistRow& row) {
  const Thread& thread = profile.threads[row.thread];
  switch (key) {
    case SortKey::kComm:
      return thread.command;
    case SortKey::kPid: {
      char tid[16];
      std::snprintf(tid, sizeof tid, "%7u:", thread.tid);
      return tid + thread.command;
    }
    case SortKey::kDso:
      return profile.dso_of(row.location).name;
    case SortKey::kSym:
      return std::string(profile.dso_of(row.location).kernel ? "[k] " : "[.] ") +
             symbol_text(profile, row);
  }
  return {};
}

const char* header_of(SortKey key) {
  switch (key) {
    case SortKey::kComm:
      return "Command";
    case SortKey::kPid:
      return "    Pid:Command";  // perf's, aligned with the "%7d:" of its rows
    case SortKey::kDso:
      return "Shared Object";
    case SortKey::kSym:
      return "Symbol";
  }
  return "";
}

void print_event(const Profile& profile, int event_index, const ReportOptions& options,
                 const ProfileFilter& filter, std::FILE* out) {
  const EventProfile& event = profile.events[static_cast<std::size_t>(event_index)];
  const auto accept = filter.predicate();
  const Hist hist = build_hist_indexed(profile, event_index, {options.keys, accept});

  std::uint64_t samples = event.samples, total = event.total_period;
  if (filter.filters() && options.relative) {
    samples = total = 0;
    for (const Stack& stack : profile.stacks) {
      if (stack.event != event_index || !filter.accept(stack)) continue;
      samples += stack.samples;
      total += stack.period;
    }
  }
  std::fprintf(out, "# Samples: %s of event '%s'\n", sample_count_text(samples).c_str(),
               event.name.c_str());
  std::fprintf(out, "# Event count (approx.): %" PRIu64 "\n#\n", total);

  // Rows perf has: those with a self period, and with --children those in any chain.
  std::vector<const HistRow*> rows;
  for (const HistRow& row : hist.rows) {
    if ((options.children ? row.children : row.self) != 0) rows.push_back(&row);
  }
  const bool graphs = options.call_graph.mode != CallGraphMode::kNone;
  sort_hist_rows(profile, options.keys, options.children,
                 graphs ? &options.call_graph.order : nullptr, rows);

  // Columns as wide as their widest value among the rows (below the percent limit too), or the
  // header; a key a filter pins to one value is left out (perf's elided column).
  std::vector<Column> columns;
  const bool unresolved = std::any_of(rows.begin(), rows.end(), [&](const HistRow* row) {
    return profile.unresolved(row->location);
  });
  for (SortKey key : options.keys) {
    const bool pinned = (key == SortKey::kComm && options.filters.comms.size() == 1) ||
                        (key == SortKey::kDso && options.filters.dsos.size() == 1);
    if (pinned) continue;
    Column column{key, header_of(key), std::string(header_of(key)).size()};
    for (const HistRow* row : rows) {
      column.width = std::max(column.width, cell(profile, key, *row).size());
    }
    // A row with no symbol widens the symbol column to an address's "[.] 0x" and 16 digits, and
    // the dso column to 16 unless --dso names the dsos (perf's unresolved column widths).
    if (unresolved && key == SortKey::kSym) column.width = std::max<std::size_t>(column.width, 22);
    if (unresolved && key == SortKey::kDso && options.filters.dsos.empty()) {
      column.width = std::max<std::size_t>(column.width, 16);
    }
    columns.push_back(std::move(column));
  }
  std::string header = options.children ? "# Children      Self" : "# Overhead";
  std::string dots = options.children ? "# ........  ........" : "# ........";
  for (const Column& column : columns) {
    header += "  " + column.header + std::string(column.width - column.header.size(), ' ');
    dots += "  " + std::string(column.width, '.');
  }
  std::fprintf(out, "%s\n%s\n#\n", header.c_str(), dots.c_str());

  const auto shown = [&](const HistRow* row) {
    return percent(options.children ? row->children : row->self, total) >= options.percent_limit;
  };
  std::vector<const HistRow*> printed;
  for (const HistRow* row : rows) {
    if (!shown(row)) continue;
    if (options.top_rows != 0 && printed.size() == options.top_rows) break;
    printed.push_back(row);
  }
  std::optional<EntryCallGraphs> call_graphs;
  if (graphs) {
    call_graphs.emplace(profile, event_index, hist, printed, options.children,
                        options.call_graph.order, accept);
  }
  // perf leaves out the entry's own frame atop a single chain when the keys start with sym.
  const bool skip_entry_frame = !options.keys.empty() && options.keys.front() == SortKey::kSym;
  std::string line;
  for (std::size_t i = 0; i < printed.size(); ++i) {
    const HistRow& row = *printed[i];
    char share[32];
    line.clear();
    if (options.children) {
      std::snprintf(share, sizeof share, "  %7.2f%%", percent(row.children, total));
      line += share;
    }
    std::snprintf(share, sizeof share, "  %7.2f%%", percent(row.self, total));
    line += share;
    for (const Column& column : columns) {
      const std::string text = cell(profile, column.key, row);
      line += "  " + text;
      // perf pads every column but a symbol at the end of the row.
      if (column.key != SortKey::kSym || &column != &columns.back()) {
        line.append(column.width - text.size(), ' ');
      }
    }
    std::fprintf(out, "%s\n", line.c_str());
    if (call_graphs) call_graphs->print(i, options.call_graph, total, skip_entry_frame, out);
  }
}

}  // namespace

std::string sample_count_text(std::uint64_t samples) {
  char unit = ' ';
  for (char next : {'K', 'M', 'G'}) {
    if (samples <= 1000) break;
    samples /= 1000;
    unit = next;
  }
  std::string text = std::to_string(samples);
  text += unit;
  return text;
}

bool has_call_chains(const Profile& profile) {
  return std::any_of(profile.events.begin(), profile.events.end(),
                     [](const EventProfile& event) { return event.chained(); });
}

void print_report(const Profile& profile, const ReportOptions& options, std::FILE* out) {
  if (std::none_of(profile.events.begin(), profile.events.end(),
                   [](const EventProfile& event) { return event.samples != 0; })) {
    std::fprintf(out, "# No samples.\n");
    return;
  }
  const ProfileFilter filter(profile, options.filters);
  // perf names a comm or dso filter of one item above the first event (the column it leaves
  // out), not its pid, tid and symbol filters.
  std::fprintf(out, "#\n");
  if (options.filters.comms.size() == 1) {
    std::fprintf(out, "# comm: %s\n", options.filters.comms[0].c_str());
  }
  if (options.filters.dsos.size() == 1) {
    std::fprintf(out, "# dso: %s\n", options.filters.dsos[0].c_str());
  }
  std::fprintf(out, "#\n");
  // Once for the file, above the first event, as perf 6.1 prints it.
  std::fprintf(out, "# Total Lost Samples: %" PRIu64 "\n", profile.lost_samples);
  if (profile.lost_records != 0) {  // userperf's: perf shows these with --stats only
    std::fprintf(out, "# Lost chunks: %" PRIu64 " LOST records, %" PRIu64 " samples\n",
                 profile.lost_records, profile.lost_in_records);
  }
  std::fprintf(out, "#\n");
  bool first = true;
  for (std::size_t i = 0; i < profile.events.size(); ++i) {
    if (profile.events[i].samples == 0) continue;
    if (!first) std::fprintf(out, "\n\n");
    first = false;
    print_event(profile, static_cast<int>(i), options, filter, out);
  }
}

}  // namespace userperf::report
