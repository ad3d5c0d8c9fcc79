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
#include "report/flat_id_map.hpp"
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
  // The row of a chain's frame at an address no symbol names, shown as sampled (perf's
  // cumulative entry) where the leaf's own row shows its offset in the mapping
  // (Profile::named_twice).
  bool as_sampled = false;
};

struct HistOptions {
  std::vector<SortKey> keys{SortKey::kComm, SortKey::kDso, SortKey::kSym};
  std::function<bool(const Stack&)> accept;  // when set, only the stacks it accepts count
};

// The row key of a (thread, location) under a list of sort keys, in two halves each numbered
// densely and cached: the thread's part (command, tid) per ThreadId, the location's part (dso,
// function) per LocationId. A frame's row is then two array reads and one lookup in a flat map,
// with no string hashed per frame.
class RowKeyer {
 public:
  RowKeyer(const Profile& profile, const std::vector<SortKey>& keys);
  // `in_chain`: the key of the frame's place in a call chain, which differs from its row as a
  // leaf only for a location named twice (Profile::named_twice) under the sym key.
  std::uint64_t operator()(ThreadId thread, LocationId location, bool in_chain = false) {
    return std::uint64_t{thread_key(thread)} << 32 | location_key(location, in_chain);
  }
  // Whether a frame's place in a chain has a row of its own.
  bool chain_row_differs(LocationId location) const {
    return function_ && profile_.named_twice(location);
  }

 private:
  std::uint32_t thread_key(ThreadId thread);
  std::uint32_t location_key(LocationId location, bool in_chain);

  const Profile& profile_;
  bool command_ = false, tid_ = false, dso_ = false, function_ = false;
  std::vector<std::uint32_t> thread_keys_, location_keys_, chain_keys_;
  std::unordered_map<std::string, std::uint32_t> thread_parts_, location_parts_;
};

// The sym key's text of a row: its function's name, or, as perf prints it ("%#.16llx"), the
// address as sampled when no mapping covers it, and for one no symbol covers the offset in the
// mapping (the address as sampled in a chain's row: HistRow::as_sampled).
std::string symbol_text(const Profile& profile, const HistRow& row);
// The address a row with no symbol is named and ordered by.
std::uint64_t unresolved_address(const Profile& profile, const HistRow& row);

struct Hist {
  Hist(const Profile& profile, const std::vector<SortKey>& keys) : keyer(profile, keys) {}

  // The row of a frame (FlatIdMap::kNone for one of no counted stack). The keyer numbers key
  // parts in the order it meets them, so only this hist's own keyer gives its rows' keys.
  std::uint32_t row_of(ThreadId thread, LocationId location, bool in_chain = false) const {
    return index.find(keyer(thread, location, in_chain));
  }

  std::vector<HistRow> rows;  // in no particular order
  FlatIdMap index;            // a key's row
  mutable RowKeyer keyer;     // caches key parts as it meets them
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
