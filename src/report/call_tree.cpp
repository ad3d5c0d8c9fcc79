#include "report/call_tree.hpp"

#include <algorithm>
#include <unordered_map>

#include "report/flat_id_map.hpp"

namespace userperf::report {

namespace {

// A child's key under its parent: a function id, or a command's index with the top bit set.
constexpr std::uint32_t kCommandBit = 0x80000000u;

}  // namespace

CallTree build_call_tree(const Profile& profile, int event, const CallTreeOptions& options) {
  CallTree tree;
  tree.nodes.emplace_back();
  // Children are found through one flat map of (parent, key) for the whole tree rather than a map
  // per node: a tree of millions of nodes stays a few vectors.
  FlatIdMap edges;
  std::unordered_map<std::string, std::int32_t> commands;
  const auto child = [&](std::uint32_t parent, std::uint32_t key) {
    const std::uint64_t edge = std::uint64_t{parent} << 32 | key;
    if (const std::uint32_t known = edges.find(edge); known != FlatIdMap::kNone) return known;
    const auto made = static_cast<std::uint32_t>(tree.nodes.size());
    edges.insert(edge, made);
    CallTreeNode node;
    node.parent = parent;
    if (key & kCommandBit) {
      node.command = static_cast<std::int32_t>(key & ~kCommandBit);
    } else {
      node.function = key;
    }
    tree.nodes.push_back(std::move(node));
    tree.nodes[parent].children.push_back(made);
    return made;
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
      node = child(node, kCommandBit | static_cast<std::uint32_t>(it->second));
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
