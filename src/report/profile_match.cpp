#include "report/profile_match.hpp"

#include <algorithm>
#include <unordered_map>

namespace userperf::report {

namespace {

void add_keys(const Profile& profile, MatchedFunctions& matched,
              std::unordered_map<std::string, std::uint32_t>& index,
              std::vector<std::uint32_t>& keys) {
  keys.reserve(profile.functions.size());
  std::string text;
  for (const Function& function : profile.functions) {
    const Dso& dso = profile.dsos[function.dso];
    // '\n' is in neither name: the pair as one map key.
    text = dso.name + '\n' + function.name;
    auto [it, fresh] = index.try_emplace(text, static_cast<std::uint32_t>(matched.keys.size()));
    if (fresh) matched.keys.push_back({dso.name, function.name, dso.kernel});
    keys.push_back(it->second);
  }
}

// Adds each counted stack's period to its leaf's self and, once per stack, to every frame's
// children.
std::uint64_t count(const Profile& profile, int event,
                    const std::function<bool(const Stack&)>& accept,
                    const std::vector<std::uint32_t>& key_of, std::vector<MatchedPeriods>& periods,
                    bool base) {
  std::uint64_t total = 0;
  std::vector<std::uint32_t> seen;
  for (const Stack& stack : profile.stacks) {
    if (stack.event != event || (accept && !accept(stack))) continue;
    total += stack.period;
    const auto frames = profile.frames_of(stack);
    seen.clear();
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const std::uint32_t key = key_of[profile.locations[frames[i]].function];
      MatchedPeriods& matched = periods[key];
      if (i == 0) (base ? matched.base_self : matched.new_self) += stack.period;
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
      seen.push_back(key);
      (base ? matched.base_children : matched.new_children) += stack.period;
    }
  }
  return total;
}

}  // namespace

MatchedFunctions match_functions(const Profile& base, const Profile& next) {
  MatchedFunctions matched;
  std::unordered_map<std::string, std::uint32_t> index;
  add_keys(base, matched, index, matched.base_key);
  add_keys(next, matched, index, matched.new_key);
  return matched;
}

ProfileDiff diff_profiles(const Profile& base, int base_event,
                          const std::function<bool(const Stack&)>& base_accept, const Profile& next,
                          int new_event, const std::function<bool(const Stack&)>& new_accept) {
  ProfileDiff diff;
  diff.functions = match_functions(base, next);
  diff.periods.resize(diff.functions.keys.size());
  diff.base_total =
      count(base, base_event, base_accept, diff.functions.base_key, diff.periods, true);
  diff.new_total = count(next, new_event, new_accept, diff.functions.new_key, diff.periods, false);
  return diff;
}

bool same_event(const EventProfile& a, const EventProfile& b) {
  if (a.name == b.name) return true;
  const bool counter = a.attr.type == PERF_TYPE_HARDWARE || a.attr.type == PERF_TYPE_SOFTWARE;
  return counter && a.attr.type == b.attr.type && a.attr.config == b.attr.config;
}

}  // namespace userperf::report
