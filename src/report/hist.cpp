#include "report/hist.hpp"

#include <algorithm>

namespace userperf::report {

std::size_t RowKeyHash::operator()(const RowKey& key) const {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (std::uint64_t part : {key.command, key.tid, key.dso, key.function}) {
    hash = (hash ^ part) * 0x100000001b3ULL;
  }
  return hash;
}

RowKeyer::RowKeyer(const Profile& profile, const std::vector<SortKey>& keys) : profile_(profile) {
  for (SortKey key : keys) {
    command_ |= key == SortKey::kComm;
    tid_ |= key == SortKey::kPid;
    dso_ |= key == SortKey::kDso;
    function_ |= key == SortKey::kSym;
  }
}

RowKey RowKeyer::operator()(ThreadId thread, LocationId location) {
  RowKey key;
  if (command_) {
    key.command =
        commands_.try_emplace(profile_.threads[thread].command, commands_.size() + 1).first->second;
  }
  if (tid_) key.tid = profile_.threads[thread].tid + 1;
  const Location& where = profile_.locations[location];
  if (dso_) key.dso = where.dso + 1;
  // A symbol is a function of a dso: perf's sym key compares the symbol, which is the dso's.
  if (function_) key.function = where.function + 1;
  return key;
}

Hist build_hist_indexed(const Profile& profile, int event, const HistOptions& options) {
  Hist hist;
  RowKeyer keyer(profile, options.keys);
  std::vector<std::size_t> rows;  // the row of each frame, leaf first
  for (const Stack& stack : profile.stacks) {
    if (stack.event != event || (options.accept && !options.accept(stack))) continue;
    rows.clear();
    const auto frames = profile.frames_of(stack);
    const auto depth = static_cast<std::uint32_t>(frames.size());
    for (std::size_t i = 0; i < frames.size(); ++i) {
      auto [it, fresh] = hist.index.try_emplace(keyer(stack.thread, frames[i]), hist.rows.size());
      if (fresh) hist.rows.push_back({stack.thread, frames[i], 0, 0, 0, 0, 0});
      HistRow& row = hist.rows[it->second];
      if (i == 0) {
        row.self += stack.period;
        row.samples += stack.samples;
        row.caller_depth = std::max(row.caller_depth, depth);
        row.callee_depth = std::max(row.callee_depth, depth);
      }
      // Recursion puts a row in a stack more than once; children counts the stack once, and its
      // callee-order chain starts at the place nearest the leaf.
      if (std::find(rows.begin(), rows.end(), it->second) == rows.end()) {
        row.children += stack.period;
        row.callee_depth = std::max(row.callee_depth, depth - static_cast<std::uint32_t>(i));
      }
      rows.push_back(it->second);
    }
    // A caller-order chain starts at the row's place nearest the root.
    for (std::size_t i = rows.size(); i-- > 1;) {
      if (std::find(rows.begin() + static_cast<std::ptrdiff_t>(i) + 1, rows.end(), rows[i]) !=
          rows.end()) {
        continue;
      }
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
        case SortKey::kDso:
          order = profile.dso_of(a.location).name.compare(profile.dso_of(b.location).name);
          break;
        case SortKey::kSym:
          order =
              profile.function_of(a.location).name.compare(profile.function_of(b.location).name);
          break;
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
