#include "report/report_printer.hpp"

#include <algorithm>
#include <cinttypes>
#include <string>

namespace userperf::report {

namespace {

double percent(std::uint64_t part, std::uint64_t total) {
  return total == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(total);
}

// A row's parts as the table shows them.
struct Shown {
  const HistRow* row;
  const std::string* command;
  const Dso* dso;
  const Function* function;
};

void print_table(const Profile& profile, const EventProfile& event,
                 const std::vector<HistRow>& hist, const ReportOptions& options, bool by_children,
                 std::FILE* out) {
  std::vector<Shown> rows;
  for (const HistRow& row : hist) {
    // Rows with nothing to show in this table's column go (a caller-only symbol has no self).
    if ((by_children ? row.children : row.self) == 0) continue;
    rows.push_back({&row, &profile.threads[row.thread].command, &profile.dso_of(row.location),
                    &profile.function_of(row.location)});
  }
  const auto key = [by_children](const HistRow* row) {
    return by_children ? std::make_pair(row->children, row->self)
                       : std::make_pair(row->self, row->children);
  };
  std::stable_sort(rows.begin(), rows.end(), [&key](const Shown& a, const Shown& b) {
    if (key(a.row) != key(b.row)) return key(a.row) > key(b.row);
    if (a.function->name != b.function->name) return a.function->name < b.function->name;
    return a.dso->name < b.dso->name;
  });
  if (rows.size() > options.top_rows) rows.resize(options.top_rows);

  std::size_t command_width = 7, dso_width = 13;  // "Command", "Shared Object"
  for (const Shown& row : rows) {
    command_width = std::max(command_width, row.command->size());
    dso_width = std::max(dso_width, row.dso->name.size());
  }
  const int cw = static_cast<int>(command_width), dw = static_cast<int>(dso_width);
  std::fprintf(out, "# %s\n#\n",
               by_children ? "Top symbols by children (inclusive)" : "Top symbols by self");
  std::fprintf(out, "# Children      Self  %-*s  %-*s  Symbol\n", cw, "Command", dw,
               "Shared Object");
  std::fprintf(out, "# ........  ........  %s  %s  ......\n#\n",
               std::string(command_width, '.').c_str(), std::string(dso_width, '.').c_str());
  for (const Shown& row : rows) {
    std::fprintf(out, "  %7.2f%%  %7.2f%%  %-*s  %-*s  [%c] %s\n",
                 percent(row.row->children, event.total_period),
                 percent(row.row->self, event.total_period), cw, row.command->c_str(), dw,
                 row.dso->name.c_str(), row.dso->kernel ? 'k' : '.', row.function->name.c_str());
  }
  std::fprintf(out, "\n");
}

}  // namespace

void print_report(const Profile& profile, const ReportOptions& options, std::FILE* out) {
  // perf's definitions: the total is the LOST_SAMPLES records'; LOST records are its "chunks".
  if (profile.lost_samples != 0 || profile.lost_records != 0) {
    std::fprintf(out, "# Total Lost Samples: %" PRIu64 "\n", profile.lost_samples);
    if (profile.lost_records != 0) {
      std::fprintf(out, "# Lost chunks: %" PRIu64 " LOST records, %" PRIu64 " samples\n",
                   profile.lost_records, profile.lost_in_records);
    }
    std::fprintf(out, "#\n");
  }
  bool any = false;
  for (std::size_t i = 0; i < profile.events.size(); ++i) {
    const EventProfile& event = profile.events[i];
    if (event.samples == 0) continue;
    any = true;
    std::fprintf(out, "# Samples: %" PRIu64 "  of event '%s'\n", event.samples, event.name.c_str());
    std::fprintf(out, "# Event count (approx.): %" PRIu64 "\n#\n", event.total_period);
    const std::vector<HistRow> hist = build_hist(profile, static_cast<int>(i), {});
    print_table(profile, event, hist, options, true, out);
    print_table(profile, event, hist, options, false, out);
  }
  if (!any) std::fprintf(out, "# No samples.\n");
}

}  // namespace userperf::report
