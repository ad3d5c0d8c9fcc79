#include "report/report_printer.hpp"

#include <algorithm>
#include <cinttypes>
#include <string>

namespace userperf::report {

namespace {

double percent(std::uint64_t part, std::uint64_t total) {
  return total == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(total);
}

void print_table(const EventProfile& event, const ReportOptions& options, bool by_children,
                 std::FILE* out) {
  std::vector<const ProfileRow*> rows;
  for (const ProfileRow& row : event.rows) rows.push_back(&row);
  const auto key = [by_children](const ProfileRow* row) {
    return by_children ? std::make_pair(row->children, row->self)
                       : std::make_pair(row->self, row->children);
  };
  std::stable_sort(rows.begin(), rows.end(), [&key](const ProfileRow* a, const ProfileRow* b) {
    if (key(a) != key(b)) return key(a) > key(b);
    return a->symbol < b->symbol;
  });
  // Rows with nothing to show in this table's column go (a caller-only symbol has no self).
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [by_children](const ProfileRow* row) {
                              return (by_children ? row->children : row->self) == 0;
                            }),
             rows.end());
  if (rows.size() > options.top_rows) rows.resize(options.top_rows);

  std::size_t command_width = 7, dso_width = 13;  // "Command", "Shared Object"
  for (const ProfileRow* row : rows) {
    command_width = std::max(command_width, row->command.size());
    dso_width = std::max(dso_width, row->dso.size());
  }
  const int cw = static_cast<int>(command_width), dw = static_cast<int>(dso_width);
  std::fprintf(out, "# %s\n#\n",
               by_children ? "Top symbols by children (inclusive)" : "Top symbols by self");
  std::fprintf(out, "# Children      Self  %-*s  %-*s  Symbol\n", cw, "Command", dw,
               "Shared Object");
  std::fprintf(out, "# ........  ........  %s  %s  ......\n#\n",
               std::string(command_width, '.').c_str(), std::string(dso_width, '.').c_str());
  for (const ProfileRow* row : rows) {
    std::fprintf(out, "  %7.2f%%  %7.2f%%  %-*s  %-*s  [%c] %s\n",
                 percent(row->children, event.total_period), percent(row->self, event.total_period),
                 cw, row->command.c_str(), dw, row->dso.c_str(), row->kernel ? 'k' : '.',
                 row->symbol.c_str());
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
  for (const EventProfile& event : profile.events) {
    if (event.samples == 0) continue;
    any = true;
    std::fprintf(out, "# Samples: %" PRIu64 "  of event '%s'\n", event.samples, event.name.c_str());
    std::fprintf(out, "# Event count (approx.): %" PRIu64 "\n#\n", event.total_period);
    print_table(event, options, true, out);
    print_table(event, options, false, out);
  }
  if (!any) std::fprintf(out, "# No samples.\n");
}

}  // namespace userperf::report
