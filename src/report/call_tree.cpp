#include "report/call_tree.hpp"

#include <algorithm>
#include <unordered_map>

namespace userperf::report {

namespace {

// Children are found through one map of (parent, key) for the whole tree rather than a map per
// node: a tree of a million nodes stays a few vectors.
struct EdgeHash {
  std::size_t operator()(const std::pair<std::uint32_t, std::int64_t>& edge) const {
    return std::hash<std::uint64_t>()((std::uint64_t{edge.first} << 32) ^
                                      static_cast<std::uint64_t>(edge.second) *
                                          0x9e3779b97f4a7c15ULL);
  }
};

}  // namespace

CallTree build_call_tree(const Profile& profile, int event, const CallTreeOptions& options) {
  CallTree tree;
  tree.nodes.emplace_back();
  // Keys: a function id, or -(command index + 1) for a command node.
  std::unordered_map<std::pair<std::uint32_t, std::int64_t>, std::uint32_t, EdgeHash> edges;
  std::unordered_map<std::string, std::int32_t> commands;
  const auto child = [&](std::uint32_t parent, std::int64_t key) {
    auto [it, fresh] =
        edges.try_emplace({parent, key}, static_cast<std::uint32_t>(tree.nodes.size()));
    if (fresh) {
      CallTreeNode node;
      node.parent = parent;
      if (key >= 0) {
        node.function = static_cast<FunctionId>(key);
      } else {
        node.command = static_cast<std::int32_t>(-key - 1);
      }
      tree.nodes.push_back(std::move(node));
      tree.nodes[parent].children.push_back(it->second);
    }
    return it->second;
  };
  const auto count = [&](std::uint32_t node, const Stack& stack) {
    tree.nodes[node].total += stack.period;
    tree.nodes[node].samples += stack.samples;
  };
  const bool by_command = options.by_command && options.order == CallOrder::kCaller;
  for (const Stack& stack : profile.stacks) {
    if (stack.event != event || (options.accept && !options.accept(stack))) continue;
    std::uint32_t node = 0;
    count(node, stack);
    if (by_command) {
      const std::string& name = profile.threads[stack.thread].command;
      auto [it, fresh] =
          commands.try_emplace(name, static_cast<std::int32_t>(tree.commands.size()));
      if (fresh) tree.commands.push_back(name);
      node = child(node, -std::int64_t{it->second} - 1);
      count(node, stack);
    }
    const auto frames = profile.frames_of(stack);
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const LocationId location =
          options.order == CallOrder::kCaller ? frames[frames.size() - 1 - i] : frames[i];
      node = child(node, profile.locations[location].function);
      count(node, stack);
    }
    tree.nodes[node].self += stack.period;
  }
  const auto name_of = [&](const CallTreeNode& node) -> const std::string& {
    return node.command >= 0 ? tree.commands[node.command] : profile.functions[node.function].name;
  };
  for (CallTreeNode& node : tree.nodes) {
    std::sort(node.children.begin(), node.children.end(), [&](std::uint32_t a, std::uint32_t b) {
      const CallTreeNode& x = tree.nodes[a];
      const CallTreeNode& y = tree.nodes[b];
      if (x.total != y.total) return x.total > y.total;
      return name_of(x) < name_of(y);
    });
  }
  return tree;
}

}  // namespace userperf::report
