// Which stacks a report counts: perf report's --comm, --pid, --tid, --dso and --symbols, one
// predicate every output format applies (the text report, folded stacks, the flame graph page,
// pprof). As perf, the thread filters look at the sampled thread and the dso and symbol filters at
// the sample's own location (the leaf of its stack), each a comma list of names or ids.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "report/profile.hpp"

namespace userperf::report {

struct FilterOptions {
  std::vector<std::string> comms;  // commands, exactly
  std::vector<std::uint32_t> pids, tids;
  std::vector<std::string> dsos;     // a dso's shown name ("libc.so.6") or its path
  std::vector<std::string> symbols;  // function names, exactly
  bool any() const {
    return !comms.empty() || !pids.empty() || !tids.empty() || !dsos.empty() || !symbols.empty();
  }
};

// "a,b,,c" as perf reads its list options: the non-empty items.
std::vector<std::string> split_list(std::string_view list);

class ProfileFilter {
 public:
  ProfileFilter() = default;  // accepts everything
  ProfileFilter(const Profile& profile, const FilterOptions& options);

  bool accept(const Stack& stack) const;
  bool filters() const { return filters_; }
  // The predicate the builders take (CallTreeOptions, HistOptions, CollapsedOptions): empty when
  // nothing is filtered, so they skip the call.
  std::function<bool(const Stack&)> predicate() const;

 private:
  const Profile* profile_ = nullptr;
  bool filters_ = false;
  // Decided once per thread, dso and function, so accept() is three lookups.
  std::vector<bool> thread_ok_, dso_ok_, function_ok_;
};

}  // namespace userperf::report
