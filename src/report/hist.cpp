#include "report/hist.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace userperf::report {

RowKeyer::RowKeyer(const Profile& profile, const std::vector<SortKey>& keys) : profile_(profile) {
  for (SortKey key : keys) {
    command_ |= key == SortKey::kComm;
    tid_ |= key == SortKey::kPid;
    dso_ |= key == SortKey::kDso;
    function_ |= key == SortKey::kSym;
  }
  thread_keys_.assign(profile.threads.size(), FlatIdMap::kNone);
  location_keys_.assign(profile.locations.size(), FlatIdMap::kNone);
  chain_keys_.assign(profile.locations.size(), FlatIdMap::kNone);
}

namespace {

std::uint32_t number(std::unordered_map<std::string, std::uint32_t>& parts, std::string part) {
  return parts.try_emplace(std::move(part), static_cast<std::uint32_t>(parts.size())).first->second;
}

}  // namespace

std::uint32_t RowKeyer::thread_key(ThreadId thread) {
  std::uint32_t& key = thread_keys_[thread];
  if (key == FlatIdMap::kNone) {
    const Thread& t = profile_.threads[thread];
    std::string name = tid_ ? std::to_string(t.tid) : std::string();
    name += '\0';
    if (command_) name += t.command;
    key = number(thread_parts_, std::move(name));
  }
  return key;
}

std::uint32_t RowKeyer::location_key(LocationId location, bool in_chain) {
  in_chain = in_chain && chain_row_differs(location);
  std::uint32_t& key = (in_chain ? chain_keys_ : location_keys_)[location];
  if (key == FlatIdMap::kNone) {
    const Location& l = profile_.locations[location];
    // A function is one dso's, so sym alone also tells dsos apart, as perf's sym key does.
    const std::uint64_t dso = dso_ ? l.dso + std::uint64_t{1} : 0;
    // An address no symbol names is a row of its own, as perf's sym key compares addresses when
    // there is no symbol (a stripped library's hot loops are rows apart, not one "[unknown]").
    std::string function = !function_                      ? std::string()
                           : profile_.unresolved(location) ? '@' + std::to_string(location)
                                                           : std::to_string(l.function);
    if (in_chain) function += "+chain";
    key = number(location_parts_, std::to_string(dso) + ':' + function);
  }
  return key;
}

std::uint64_t unresolved_address(const Profile& profile, const HistRow& row) {
  const Location& l = profile.locations[row.location];
  if (profile.unmapped(row.location) || profile.dso_of(row.location).kernel) return l.address;
  return row.as_sampled ? l.sampled_address : l.map_address;
}

std::string symbol_text(const Profile& profile, const HistRow& row) {
  if (!profile.unresolved(row.location)) return profile.function_of(row.location).name;
  char address[24];
  std::snprintf(address, sizeof address, "%#.16" PRIx64, unresolved_address(profile, row));
  return address;
}

Hist build_hist_indexed(const Profile& profile, int event, const HistOptions& options) {
  Hist hist(profile, options.keys);
  RowKeyer& keys = hist.keyer;
  // The last stack each row counted its children period for (recursion puts a row in a stack
  // more than once, and children counts the stack once), and the last one that gave it its
  // caller-order depth.
  std::vector<std::size_t> counted_in, caller_depth_in;
  std::vector<std::uint32_t> rows;  // the row of each frame, leaf first
  // Whether a sample's frames are a call chain (perf's cumulative entries), beyond its leaf.
  const bool chained = profile.events[static_cast<std::size_t>(event)].chained();
  ThreadId thread = 0;
  const auto row_of = [&](LocationId location, bool in_chain) {
    const std::uint64_t key = keys(thread, location, in_chain);
    std::uint32_t row = hist.index.find(key);
    if (row == FlatIdMap::kNone) {
      row = static_cast<std::uint32_t>(hist.rows.size());
      hist.index.insert(key, row);
      HistRow made{thread, location, 0, 0, 0, 0, 0};
      made.as_sampled = in_chain && keys.chain_row_differs(location);
      hist.rows.push_back(made);
      counted_in.push_back(SIZE_MAX);
      caller_depth_in.push_back(SIZE_MAX);
    }
    return row;
  };
  for (std::size_t s = 0; s < profile.stacks.size(); ++s) {
    const Stack& stack = profile.stacks[s];
    if (stack.event != event || (options.accept && !options.accept(stack))) continue;
    const auto frames = profile.frames_of(stack);
    const auto depth = static_cast<std::uint32_t>(frames.size());
    thread = stack.thread;
    rows.clear();
    for (std::size_t i = 0; i < frames.size(); ++i) {
      // The frame's row as a place in the chain; the leaf's own row (its self period) differs
      // from it for an address perf names twice (Profile::named_twice).
      const std::uint32_t row = row_of(frames[i], chained);
      rows.push_back(row);
      if (i == 0) {
        const std::uint32_t own = chained ? row_of(frames[i], false) : row;
        HistRow& leaf = hist.rows[own];
        leaf.self += stack.period;
        leaf.samples += stack.samples;
        leaf.caller_depth = std::max(leaf.caller_depth, depth);
        leaf.callee_depth = std::max(leaf.callee_depth, depth);
        caller_depth_in[own] = s;
        if (own != row) {
          counted_in[own] = s;
          leaf.children += stack.period;
        }
      }
      HistRow& counted = hist.rows[row];
      if (counted_in[row] != s) {
        counted_in[row] = s;
        counted.children += stack.period;
        // Its callee-order chain starts at its place nearest the leaf: this one.
        counted.callee_depth =
            std::max(counted.callee_depth, depth - static_cast<std::uint32_t>(i));
      }
    }
    // A caller-order chain starts at the row's place nearest the root.
    for (std::size_t i = rows.size(); i-- > 0;) {
      if (caller_depth_in[rows[i]] == s) continue;
      caller_depth_in[rows[i]] = s;
      HistRow& row = hist.rows[rows[i]];
      row.caller_depth = std::max(row.caller_depth, static_cast<std::uint32_t>(i + 1));
    }
  }
  return hist;
}

std::vector<HistRow> build_hist(const Profile& profile, int event, const HistOptions& options) {
  return build_hist_indexed(profile, event, options).rows;
}

void sort_hist_rows(const Profile& profile, const std::vector<SortKey>& keys, bool by_children,
                    const CallOrder* graph_order, std::vector<const HistRow*>& rows) {
  const auto by_keys = [&](const HistRow& a, const HistRow& b) {
    for (SortKey key : keys) {
      int order = 0;
      switch (key) {
        case SortKey::kComm:
          order = profile.threads[a.thread].command.compare(profile.threads[b.thread].command);
          break;
        case SortKey::kPid: {
          const std::uint32_t x = profile.threads[a.thread].tid, y = profile.threads[b.thread].tid;
          order = x < y ? -1 : (x > y ? 1 : 0);
          break;
        }
        case SortKey::kDso: {
          // perf's rows with no map come after those with one.
          const bool x = profile.unmapped(a.location), y = profile.unmapped(b.location);
          order = x != y ? (x ? 1 : -1)
                         : profile.dso_of(a.location).name.compare(profile.dso_of(b.location).name);
          break;
        }
        case SortKey::kSym: {
          // perf's rows with no symbol come after those with one, in the order of their addresses.
          const bool x = profile.unresolved(a.location), y = profile.unresolved(b.location);
          if (x != y) {
            order = x ? 1 : -1;
          } else if (x) {
            const std::uint64_t p = unresolved_address(profile, a);
            const std::uint64_t q = unresolved_address(profile, b);
            order = p < q ? -1 : (p > q ? 1 : 0);
          } else {
            order =
                profile.function_of(a.location).name.compare(profile.function_of(b.location).name);
          }
          break;
        }
      }
      if (order != 0) return order < 0;
    }
    return false;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const HistRow* a, const HistRow* b) {
    if (by_children && a->children != b->children) return a->children > b->children;
    if (by_children && graph_order != nullptr && a->thread == b->thread) {
      const bool caller = *graph_order == CallOrder::kCaller;
      const std::uint32_t x = caller ? a->caller_depth : a->callee_depth;
      const std::uint32_t y = caller ? b->caller_depth : b->callee_depth;
      if (x != y) return caller ? x > y : x < y;
    }
    if (a->self != b->self) return a->self > b->self;
    return by_keys(*a, *b);
  });
}

}  // namespace userperf::report
