// perf report's call graphs under the rows of its table (--call-graph=graph|fractal|flat|folded,
// THRESHOLD, caller|callee), printed as perf's stdio browser prints them.
//
// An entry's graph is the tree of the call chains perf appends to it: without --children, the whole
// chain of each sample whose leaf is the entry; with --children, that too, plus for every other
// entry in a sample's chain the part of the chain from that entry on (towards the leaf in caller
// order, towards the root in callee order), once per sample. Frames are merged by function (perf's
// default key compares the symbol: its dso and start), an unnamed frame by its address. The trees
// of all printed entries are built in one pass over the stacks.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "report/call_tree.hpp"
#include "report/hist.hpp"
#include "report/profile.hpp"

namespace userperf::report {

enum class CallGraphMode { kNone, kGraph, kFractal, kFlat, kFolded };

struct CallGraphOptions {
  CallGraphMode mode = CallGraphMode::kGraph;
  double threshold =
      0.5;  // percent: of the event's total (graph, flat, folded), of the parent (fractal)
  CallOrder order = CallOrder::kCaller;
};

class EntryCallGraphs {
 public:
  // Trees for `entries` (rows of `hist`, built over the same stacks).
  EntryCallGraphs(const Profile& profile, int event, const Hist& hist,
                  const std::vector<const HistRow*>& entries, bool children, CallOrder order,
                  const std::function<bool(const Stack&)>& accept);

  // The graph of entries[entry]. `total` is the period percentages of graph/flat/folded are of
  // (and the threshold's base); `skip_entry_frame` leaves out the first frame of a single chain
  // (perf does when the sort keys start with sym: it is the entry's own symbol).
  void print(std::size_t entry, const CallGraphOptions& options, std::uint64_t total,
             bool skip_entry_frame, std::FILE* out) const;

 private:
  static constexpr std::uint32_t kNoNode = UINT32_MAX;
  // Children are a list threaded through the nodes (first, last, next sibling) in the order they
  // were made: a node is 40 bytes and no allocation of its own, which matters when every entry of
  // a million-sample file has a graph.
  struct Node {
    std::uint32_t key = 0;    // function id, or kAddressKey | location for an unnamed frame
    LocationId location = 0;  // the first location seen of it
    std::uint64_t total = 0, self = 0;
    std::uint32_t first_child = kNoNode, last_child = kNoNode, next_sibling = kNoNode;
    std::uint32_t child_count = 0;
  };
  std::vector<std::uint32_t> children_of(const Node& node) const;
  static constexpr std::uint32_t kAddressKey = std::uint32_t{1} << 31;

  // A node of perf's radix tree: a run of frames each the only child of the one before with no
  // sample ending in it, from `first` to `last`.
  struct Run {
    std::uint32_t first, last;
  };
  Run run_from(std::uint32_t node) const;
  std::vector<std::uint32_t> kept_children(const Node& node, std::uint64_t min_hit) const;
  bool after(std::uint32_t a, std::uint32_t b) const;
  std::string name_of(std::uint32_t node) const;

  struct GraphPrint;
  // Whether it printed any branch.
  bool print_graph_level(const GraphPrint& print, const Node& parent, std::uint64_t total,
                         int depth, std::vector<bool> mask) const;
  void print_flat(std::uint32_t root, const CallGraphOptions& options, std::uint64_t total,
                  std::FILE* out) const;

  const Profile& profile_;
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> roots_;  // per entry
  std::vector<std::uint64_t> entry_periods_;
};

}  // namespace userperf::report
