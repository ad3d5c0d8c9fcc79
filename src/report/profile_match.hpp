// Two profiles matched function by function, as perf diff matches them (its default sort keys
// dso,sym): a function of one file is the same as a function of the other when their shared
// objects' shown names and their names are equal. Used by the diff table (report/diff_printer) and
// by the differential flame graph, which key their stacks' frames by MatchedFunctions::key_of.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "report/profile.hpp"

namespace userperf::report {

struct MatchedFunction {
  std::string dso;   // Dso::name
  std::string name;  // Function::name
  bool kernel = false;
};

struct MatchedFunctions {
  std::vector<MatchedFunction> keys;  // the functions of both profiles, each once
  // Per function of each profile (indexed by its FunctionId): its key, an index into `keys`.
  std::vector<std::uint32_t> base_key, new_key;
};

MatchedFunctions match_functions(const Profile& base, const Profile& next);

// Whether two files' events are the same event: the same name, or the same counter (type and
// config) of a hardware or software PMU, whatever modifiers name it ("cpu-clock" from userperf
// record, "cpu-clock:ppp" from perf record).
bool same_event(const EventProfile& a, const EventProfile& b);

// One matched function's period in each profile: `self` of the samples whose leaf it is,
// `children` of the samples it is anywhere in (once per sample).
struct MatchedPeriods {
  std::uint64_t base_self = 0, new_self = 0;
  std::uint64_t base_children = 0, new_children = 0;
};

struct ProfileDiff {
  MatchedFunctions functions;
  std::vector<MatchedPeriods> periods;          // per key
  std::uint64_t base_total = 0, new_total = 0;  // periods of the counted stacks
};

// The event `base_event` of `base` against `new_event` of `next`, counting the stacks each
// predicate accepts (all when empty).
ProfileDiff diff_profiles(const Profile& base, int base_event,
                          const std::function<bool(const Stack&)>& base_accept, const Profile& next,
                          int new_event, const std::function<bool(const Stack&)>& new_accept);

}  // namespace userperf::report
