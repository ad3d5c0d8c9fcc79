// The call tree of one event's stacks: each node a function reached by one path of calls, with the
// period of the samples in it (self) and under it (total). Built caller-first (the root's children
// are the outermost frames, main and _start: a flame graph, perf's "caller" graph) or callee-first
// (the root's children are the leaves: an icicle, perf's "callee" graph). The flame graph page, the
// call graphs of the text report and the folded stacks all walk this one tree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "report/profile.hpp"

namespace userperf::report {

enum class CallOrder { kCaller, kCallee };

struct CallTreeNode {
  FunctionId function = 0;    // meaningless for the root and for command nodes
  std::int32_t command = -1;  // a command node (by_command): index into CallTree::commands
  std::uint32_t parent = 0;
  std::uint64_t self = 0;               // period of samples whose stack ends here
  std::uint64_t total = 0;              // period of samples through here (self included)
  std::uint64_t samples = 0;            // samples through here
  std::vector<std::uint32_t> children;  // node indices, by total descending, then by name
};

struct CallTree {
  std::vector<CallTreeNode> nodes;    // nodes[0] is the root: every sample of the event
  std::vector<std::string> commands;  // names of the command nodes
};

struct CallTreeOptions {
  CallOrder order = CallOrder::kCaller;
  // When set, only stacks it accepts are counted (filters).
  std::function<bool(const Stack&)> accept;
  // A first level of one node per command under the root, as flamegraph.pl's stackcollapse-perf
  // puts it (caller order only).
  bool by_command = false;
};

CallTree build_call_tree(const Profile& profile, int event, const CallTreeOptions& options);

}  // namespace userperf::report
