#include "report/diff_printer.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "report/profile_match.hpp"

namespace userperf::report {

namespace {

double percent(std::uint64_t part, std::uint64_t total) {
  return total == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(total);
}

struct DiffRow {
  std::uint32_t key;
  bool in_base, in_new;  // sampled (as a leaf) in each file: perf's entry and its pair
  double baseline, delta;
};

void print_event_diff(const Profile& base, int base_event, const ProfileFilter& base_filter,
                      const Profile& next, int new_event, const ProfileFilter& new_filter,
                      const DiffOptions& options, std::FILE* out) {
  const ProfileDiff diff = diff_profiles(base, base_event, base_filter.predicate(), next, new_event,
                                         new_filter.predicate());
  std::vector<DiffRow> rows;
  for (std::uint32_t key = 0; key < diff.periods.size(); ++key) {
    const MatchedPeriods& periods = diff.periods[key];
    if (periods.base_self == 0 && periods.new_self == 0) continue;
    const double baseline = percent(periods.base_self, diff.base_total);
    rows.push_back({key, periods.base_self != 0, periods.new_self != 0, baseline,
                    percent(periods.new_self, diff.new_total) - baseline});
  }
  const auto& keys = diff.functions.keys;
  // perf diff's order: symbols sampled in NEW by the size of their change, then those only in
  // BASE by their baseline; then by shared object and symbol.
  std::sort(rows.begin(), rows.end(), [&](const DiffRow& a, const DiffRow& b) {
    if (a.in_new != b.in_new) return a.in_new;
    if (a.in_new && std::fabs(a.delta) != std::fabs(b.delta)) {
      return std::fabs(a.delta) > std::fabs(b.delta);
    }
    if (a.baseline != b.baseline) return a.baseline > b.baseline;
    if (keys[a.key].dso != keys[b.key].dso) return keys[a.key].dso < keys[b.key].dso;
    return keys[a.key].name < keys[b.key].name;
  });
  if (options.top_rows != 0 && rows.size() > options.top_rows) rows.resize(options.top_rows);

  std::size_t dso_width = 13, symbol_width = 6;  // "Shared Object", "Symbol"
  for (const DiffRow& row : rows) {
    dso_width = std::max(dso_width, keys[row.key].dso.size());
    symbol_width = std::max(symbol_width, keys[row.key].name.size() + 4);  // "[.] "
  }
  const int dw = static_cast<int>(dso_width), sw = static_cast<int>(symbol_width);
  std::fprintf(out, "# Event '%s'\n#\n",
               base.events[static_cast<std::size_t>(base_event)].name.c_str());
  std::fprintf(out, "# Baseline  Delta Abs  %-*s  %-*s\n", dw, "Shared Object", sw, "Symbol");
  std::fprintf(out, "# ........  .........  %s  %s\n#\n", std::string(dso_width, '.').c_str(),
               std::string(symbol_width, '.').c_str());
  for (const DiffRow& row : rows) {
    char baseline[16] = "", delta[16] = "";
    if (row.in_base) std::snprintf(baseline, sizeof baseline, "%.2f%%", row.baseline);
    // perf diff shows the change of every symbol NEW has ("-0.00%" too), none for the others.
    if (row.in_new) {
      std::snprintf(delta, sizeof delta, "%+.2f%%", row.delta);
    }
    const MatchedFunction& function = keys[row.key];
    std::fprintf(out, "  %8s  %9s  %-*s  [%c] %s\n", baseline, delta, dw, function.dso.c_str(),
                 function.kernel ? 'k' : '.', function.name.c_str());
  }
}

}  // namespace

void print_diff(const Profile& base, const Profile& next, const DiffOptions& options,
                std::FILE* out) {
  const ProfileFilter base_filter(base, options.filters);
  const ProfileFilter new_filter(next, options.filters);
  bool first = true;
  for (std::size_t i = 0; i < base.events.size(); ++i) {
    if (base.events[i].samples == 0) continue;
    const auto match =
        std::find_if(next.events.begin(), next.events.end(),
                     [&](const EventProfile& event) { return same_event(event, base.events[i]); });
    if (match == next.events.end()) continue;
    if (!first) std::fprintf(out, "\n");
    first = false;
    print_event_diff(base, static_cast<int>(i), base_filter, next,
                     static_cast<int>(match - next.events.begin()), new_filter, options, out);
  }
  if (first) std::fprintf(out, "# No event of the base file has samples in the new one.\n");
}

}  // namespace userperf::report
