#include "report/callchain_printer.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <string>

namespace userperf::report {

namespace {

double percent(std::uint64_t part, std::uint64_t total) {
  return total == 0 ? 0.0 : static_cast<double>(part) * 100.0 / static_cast<double>(total);
}

// perf's left margin of every call graph line: 12 columns, plus what "---" added.
void print_margin(std::FILE* out, int margin) {
  std::fprintf(out, "%*s", 12 + margin, "");
}

}  // namespace

EntryCallGraphs::EntryCallGraphs(const Profile& profile, int event, const Hist& hist,
                                 const std::vector<const HistRow*>& entries, bool children,
                                 CallOrder order, const std::function<bool(const Stack&)>& accept)
    : profile_(profile) {
  std::vector<std::int32_t> slot(hist.rows.size(), -1);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    slot[static_cast<std::size_t>(entries[i] - hist.rows.data())] = static_cast<std::int32_t>(i);
    roots_.push_back(static_cast<std::uint32_t>(nodes_.size()));
    nodes_.emplace_back();
    entry_periods_.push_back(children ? entries[i]->children : entries[i]->self);
  }
  const bool chained = profile.events[static_cast<std::size_t>(event)].chained();
  std::vector<bool> unnamed;
  for (const Function& function : profile.functions)
    unnamed.push_back(function.name == "[unknown]");
  FlatIdMap edges;  // (parent node, frame key) -> child node, for every tree at once
  std::vector<LocationId> chain;
  std::vector<std::size_t> rows, seen;
  const auto append = [&](std::int32_t entry, std::size_t from, std::uint64_t period) {
    std::uint32_t node = roots_[static_cast<std::size_t>(entry)];
    nodes_[node].total += period;
    for (std::size_t k = from; k < chain.size(); ++k) {
      const LocationId location = chain[k];
      const FunctionId function = profile.locations[location].function;
      const std::uint32_t key = unnamed[function] ? kAddressKey | location : function;
      const std::uint64_t edge = std::uint64_t{node} << 32 | key;
      std::uint32_t child = edges.find(edge);
      if (child == FlatIdMap::kNone) {
        child = static_cast<std::uint32_t>(nodes_.size());
        edges.insert(edge, child);
        Node& parent = nodes_[node];
        if (parent.last_child == kNoNode) {
          parent.first_child = child;
        } else {
          nodes_[parent.last_child].next_sibling = child;
        }
        parent.last_child = child;
        ++parent.child_count;
        Node made;
        made.key = key;
        made.location = location;
        nodes_.push_back(made);
      }
      node = child;
      nodes_[node].total += period;
    }
    nodes_[node].self += period;
  };
  for (const Stack& stack : profile.stacks) {
    if (stack.event != event || (accept && !accept(stack))) continue;
    const auto frames = profile.frames_of(stack);
    chain.assign(frames.begin(), frames.end());
    if (order == CallOrder::kCaller) std::reverse(chain.begin(), chain.end());
    rows.clear();
    // Each frame's row as a place in the chain, and the leaf's own row: the two differ for an
    // address perf names twice (Profile::named_twice), whose chain row also gets the chain.
    for (LocationId location : chain) rows.push_back(hist.row_of(stack.thread, location, chained));
    const std::size_t leaf = order == CallOrder::kCaller ? chain.size() - 1 : 0;
    const std::size_t own = hist.row_of(stack.thread, chain[leaf]);
    if (slot[own] >= 0) append(slot[own], 0, stack.period);
    if (!children) continue;
    // Every other entry of the chain gets the chain from its first place on, once per sample.
    seen.assign(1, own);
    for (std::size_t j = 0; j < chain.size(); ++j) {
      if (std::find(seen.begin(), seen.end(), rows[j]) != seen.end()) continue;
      seen.push_back(rows[j]);
      if (slot[rows[j]] >= 0) append(slot[rows[j]], j, stack.period);
    }
  }
}

std::string EntryCallGraphs::name_of(std::uint32_t node) const {
  const std::uint32_t key = nodes_[node].key;
  if ((key & kAddressKey) == 0) return profile_.functions[key].name;
  // perf's node of no symbol shows the address as sampled: a mapped file's, as first sampled.
  const Location& l = profile_.locations[static_cast<LocationId>(key & ~kAddressKey)];
  char address[32];
  std::snprintf(address, sizeof address, "%#" PRIx64,
                l.sampled_address != 0 ? l.sampled_address : l.address);
  return address;
}

std::vector<std::uint32_t> EntryCallGraphs::children_of(const Node& node) const {
  std::vector<std::uint32_t> children;
  children.reserve(node.child_count);
  for (std::uint32_t child = node.first_child; child != kNoNode;
       child = nodes_[child].next_sibling) {
    children.push_back(child);
  }
  return children;
}

EntryCallGraphs::Run EntryCallGraphs::run_from(std::uint32_t node) const {
  Run run{node, node};
  while (nodes_[run.last].self == 0 && nodes_[run.last].child_count == 1) {
    run.last = nodes_[run.last].first_child;
  }
  return run;
}

// Whether perf's tree of a node's children puts `a` after `b`: it orders them by their symbols'
// dso (the address of perf's dso object: none for an unmapped address, and the kernel's is made
// first) and start, descending; the address of the first location seen stands for the start.
bool EntryCallGraphs::after(std::uint32_t a, std::uint32_t b) const {
  const LocationId la = nodes_[a].location, lb = nodes_[b].location;
  const Location& x = profile_.locations[la];
  const Location& y = profile_.locations[lb];
  const auto rank = [&](LocationId id, const Location& where) -> std::uint64_t {
    if (profile_.unmapped(id)) return 0;
    return profile_.dsos[where.dso].kernel ? 1 : std::uint64_t{where.dso} + 2;
  };
  if (rank(la, x) != rank(lb, y)) return rank(la, x) < rank(lb, y);
  return x.address < y.address;
}

// A node's children that reach `min_hit`, biggest first (perf's rb-tree of the sorted chain);
// equal ones in the order of perf's tree of children.
std::vector<std::uint32_t> EntryCallGraphs::kept_children(const Node& node,
                                                          std::uint64_t min_hit) const {
  std::vector<std::uint32_t> kept;
  for (std::uint32_t child = node.first_child; child != kNoNode;
       child = nodes_[child].next_sibling) {
    if (nodes_[child].total >= min_hit) kept.push_back(child);
  }
  std::sort(kept.begin(), kept.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (nodes_[a].total != nodes_[b].total) return nodes_[a].total > nodes_[b].total;
    return after(b, a);
  });
  return kept;
}

struct EntryCallGraphs::GraphPrint {
  std::FILE* out;
  bool fractal;
  double threshold;
  std::uint64_t absolute_min_hit;
  int margin;

  // graph: a fixed share of the event; fractal: a share of what the node's children hold.
  std::uint64_t min_hit(const Node& node) const {
    if (!fractal) return absolute_min_hit;
    return static_cast<std::uint64_t>(
        std::ceil(static_cast<double>(node.total - node.self) * threshold / 100.0));
  }
  void line(int depth, const std::vector<bool>& mask) const {
    print_margin(out, margin);
    for (int i = 0; i < depth; ++i) std::fputs(mask[i] ? "|          " : "           ", out);
    std::fputc('\n', out);
  }
  // A frame of a branch: the first one carries the branch's share ("--12.34%--").
  void frame(int depth, const std::vector<bool>& mask, bool first, std::uint64_t hits,
             std::uint64_t total, const std::string& name) const {
    print_margin(out, margin);
    for (int i = 0; i < depth; ++i) {
      std::fputc(mask[i] ? '|' : ' ', out);
      if (first && i == depth - 1) {
        std::fprintf(out, "--%.2f%%--", percent(hits, total));
      } else {
        std::fputs("          ", out);
      }
    }
    std::fprintf(out, "%s\n", name.c_str());
  }
};

bool EntryCallGraphs::print_graph_level(const GraphPrint& print, const Node& parent,
                                        std::uint64_t total, int depth,
                                        std::vector<bool> mask) const {
  const std::vector<std::uint32_t> kids = kept_children(parent, print.min_hit(parent));
  if (mask.size() <= static_cast<std::size_t>(depth)) mask.resize(depth + 1, false);
  std::vector<bool> new_mask = mask;
  std::uint64_t remaining = total;
  for (std::size_t k = 0; k < kids.size(); ++k) {
    const Run run = run_from(kids[k]);
    const std::uint64_t cumul = nodes_[kids[k]].total;
    remaining -= std::min(remaining, cumul);
    // The last branch of a level ends its pipe, unless fractal's "[...]" of what the threshold
    // left out comes after it.
    if (k + 1 == kids.size() && (!print.fractal || remaining == 0)) new_mask[depth - 1] = false;
    print.line(depth, mask);
    bool first = true;
    for (std::uint32_t node = run.first;; node = nodes_[node].first_child) {
      print.frame(depth, new_mask, first, cumul, total, name_of(node));
      first = false;
      if (node == run.last) break;
    }
    const Node& last = nodes_[run.last];
    std::vector<bool> child_mask = new_mask;
    child_mask[depth] = true;
    print_graph_level(print, last, print.fractal ? last.total - last.self : total, depth + 1,
                      child_mask);
  }
  if (print.fractal && remaining != 0 && remaining != total) {
    new_mask[depth - 1] = false;
    print.frame(depth, new_mask, true, remaining, total, "[...]");
  }
  return !kids.empty();
}

void EntryCallGraphs::print_flat(std::uint32_t root, const CallGraphOptions& options,
                                 std::uint64_t total, std::FILE* out) const {
  const auto min_hit =
      static_cast<std::uint64_t>(static_cast<double>(total) * (options.threshold / 100.0));
  struct Chain {
    std::vector<std::uint32_t> path;
    std::uint64_t hit, cumul;
  };
  std::vector<Chain> chains;
  std::vector<std::uint32_t> path;
  // Every node some samples end in, with its path (perf's flat list of callchain nodes, made
  // children first in the order of its tree of children).
  const std::function<void(std::uint32_t)> walk = [&](std::uint32_t node) {
    if (node != root) path.push_back(node);
    std::vector<std::uint32_t> kids = children_of(nodes_[node]);
    std::sort(kids.begin(), kids.end(),
              [&](std::uint32_t a, std::uint32_t b) { return after(b, a); });
    for (std::uint32_t kid : kids) walk(kid);
    const Node& here = nodes_[node];
    if (node != root && here.self != 0 && here.self >= min_hit) {
      // The radix node ending here starts after the last ancestor with a sample or a fork.
      std::size_t start = path.size() - 1;
      while (start > 0 && nodes_[path[start - 1]].self == 0 &&
             nodes_[path[start - 1]].child_count == 1) {
        --start;
      }
      chains.push_back({path, here.self, nodes_[path[start]].total});
    }
    if (node != root) path.pop_back();
  };
  walk(root);
  std::stable_sort(chains.begin(), chains.end(),
                   [](const Chain& a, const Chain& b) { return a.hit > b.hit; });
  for (const Chain& chain : chains) {
    if (options.mode == CallGraphMode::kFlat) {
      std::fprintf(out, "           %.2f%%\n", percent(chain.cumul, total));
      for (std::uint32_t node : chain.path)
        std::fprintf(out, "                %s\n", name_of(node).c_str());
      std::fputc('\n', out);
    } else {
      std::fprintf(out, "%.2f%% ", percent(chain.hit, total));
      for (std::size_t i = 0; i < chain.path.size(); ++i) {
        std::fprintf(out, "%s%s", i == 0 ? "" : ";", name_of(chain.path[i]).c_str());
      }
      std::fputc('\n', out);
    }
  }
}

void EntryCallGraphs::print(std::size_t entry, const CallGraphOptions& options, std::uint64_t total,
                            bool skip_entry_frame, std::FILE* out) const {
  const std::uint32_t root = roots_[entry];
  switch (options.mode) {
    case CallGraphMode::kNone:
      return;
    case CallGraphMode::kFlat:
    case CallGraphMode::kFolded:
      print_flat(root, options, total, out);
      return;
    case CallGraphMode::kGraph:
    case CallGraphMode::kFractal:
      break;
  }
  const std::uint64_t parent_samples = entry_periods_[entry];
  GraphPrint print{
      out, options.mode == CallGraphMode::kFractal, options.threshold,
      static_cast<std::uint64_t>(static_cast<double>(total) * (options.threshold / 100.0)), 0};
  const Node* level = &nodes_[root];
  bool printed = false;
  const std::vector<std::uint32_t> top = kept_children(*level, print.min_hit(*level));
  // One chain holding all of the entry: no percentage, "---" then its frames.
  if (top.size() == 1 && nodes_[top[0]].total == parent_samples) {
    const Run run = run_from(top[0]);
    bool first = true;
    for (std::uint32_t node = run.first;; node = nodes_[node].first_child) {
      if (!(first && skip_entry_frame)) {
        print_margin(out, print.margin);
        if (!printed) {
          std::fputs("|\n", out);
          print_margin(out, print.margin);
          std::fputs("---", out);
          print.margin += 3;
          printed = true;
        }
        std::fprintf(out, "%s\n", name_of(node).c_str());
      }
      first = false;
      if (node == run.last) break;
    }
    level = &nodes_[run.last];
  }
  if (print_graph_level(print, *level, print.fractal ? parent_samples : total, 1, {true}) ||
      printed) {
    std::fputc('\n', out);  // perf ends a graph with a blank line, if it printed one
  }
}

}  // namespace userperf::report
