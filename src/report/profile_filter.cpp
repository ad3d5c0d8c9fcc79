#include "report/profile_filter.hpp"

#include <algorithm>

namespace userperf::report {

namespace {

template <typename T>
bool listed(const std::vector<T>& list, const T& value) {
  return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

std::vector<std::string> split_list(std::string_view list) {
  std::vector<std::string> items;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    if (!item.empty()) items.emplace_back(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return items;
}

ProfileFilter::ProfileFilter(const Profile& profile, const FilterOptions& options)
    : profile_(&profile), filters_(options.any()) {
  thread_ok_.reserve(profile.threads.size());
  for (const Thread& thread : profile.threads) {
    thread_ok_.push_back(listed(options.comms, thread.command) &&
                         listed(options.pids, thread.pid) && listed(options.tids, thread.tid));
  }
  dso_ok_.reserve(profile.dsos.size());
  for (const Dso& dso : profile.dsos) {
    dso_ok_.push_back(listed(options.dsos, dso.name) ||
                      std::find(options.dsos.begin(), options.dsos.end(), dso.path) !=
                          options.dsos.end());
  }
  function_ok_.reserve(profile.functions.size());
  for (const Function& function : profile.functions) {
    function_ok_.push_back(listed(options.symbols, function.name));
  }
}

bool ProfileFilter::accept(const Stack& stack) const {
  if (!filters_) return true;
  if (!thread_ok_[stack.thread]) return false;
  const Location& leaf = profile_->locations[profile_->frames[stack.first]];
  return dso_ok_[leaf.dso] && function_ok_[leaf.function];
}

std::function<bool(const Stack&)> ProfileFilter::predicate() const {
  if (!filters_) return {};
  return [this](const Stack& stack) { return accept(stack); };
}

}  // namespace userperf::report
