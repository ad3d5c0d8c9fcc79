// perf report's histogram: one event's samples summed per sort key (perf's --sort: comm, pid, dso,
// sym, in any combination; default comm,dso,sym). `self` is the period of the samples whose leaf
// has the key, `children` the period of the samples with the key anywhere in their stack (once per
// sample), as perf report's two columns.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "report/call_tree.hpp"
#include "report/profile.hpp"

namespace userperf::report {

// perf's "pid" key is the thread (its column shows tid:command), as here.
enum class SortKey { kComm, kPid, kDso, kSym };

struct HistRow {
  ThreadId thread = 0;      // a thread of the row (its command and tid when those are keys)
  LocationId location = 0;  // a location of the row (its dso and function when those are keys)
  std::uint64_t self = 0;
  std::uint64_t children = 0;
  std::uint64_t samples = 0;  // samples whose leaf has the key
  // The longest chain perf's --children call graph of the row holds: its samples' whole chains,
  // and the chains from the row's first place on (from the root side in caller order, from the
  // leaf side in callee order). perf puts callers above callees of equal children with it.
  std::uint32_t caller_depth = 0, callee_depth = 0;
};

struct HistOptions {
  std::vector<SortKey> keys{SortKey::kComm, SortKey::kDso, SortKey::kSym};
  std::function<bool(const Stack&)> accept;  // when set, only the stacks it accepts count
};

// The key of a (thread, location) under a list of sort keys: the ids of the parts the keys name,
// the rest 0. Commands are numbered by name, so two threads of one command share a comm key.
struct RowKey {
  std::uint64_t command = 0, tid = 0, dso = 0, function = 0;
  bool operator==(const RowKey&) const = default;
};

struct RowKeyHash {
  std::size_t operator()(const RowKey& key) const;
};

class RowKeyer {
 public:
  RowKeyer(const Profile& profile, const std::vector<SortKey>& keys);
  RowKey operator()(ThreadId thread, LocationId location);

 private:
  const Profile& profile_;
  bool command_ = false, tid_ = false, dso_ = false, function_ = false;
  std::unordered_map<std::string, std::uint64_t> commands_;
};

struct Hist {
  std::vector<HistRow> rows;                                  // in no particular order
  std::unordered_map<RowKey, std::size_t, RowKeyHash> index;  // a key's row
};

Hist build_hist_indexed(const Profile& profile, int event, const HistOptions& options);

// Rows in no particular order.
std::vector<HistRow> build_hist(const Profile& profile, int event, const HistOptions& options);

// perf report's order of rows: by children (when `by_children`; rows of one thread with equal
// children by the depth of their call graph in `graph_order`, deeper first in caller order, when
// call graphs are shown), then self, descending; then by the sort keys in their order, each
// ascending (commands and names as strcmp, tids as numbers).
void sort_hist_rows(const Profile& profile, const std::vector<SortKey>& keys, bool by_children,
                    const CallOrder* graph_order, std::vector<const HistRow*>& rows);

}  // namespace userperf::report
