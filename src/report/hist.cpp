#include "report/hist.hpp"

#include <algorithm>
#include <unordered_map>

namespace userperf::report {

namespace {

// The key of a (thread, location) under `keys`: the ids of the parts the keys name, the rest 0.
struct RowKey {
  std::uint64_t command = 0, pid = 0, dso = 0, function = 0;
  bool operator==(const RowKey&) const = default;
};

struct RowKeyHash {
  std::size_t operator()(const RowKey& key) const {
    std::uint64_t hash = 0xcbf29ce484222325ULL;
    for (std::uint64_t part : {key.command, key.pid, key.dso, key.function}) {
      hash = (hash ^ part) * 0x100000001b3ULL;
    }
    return hash;
  }
};

class Keyer {
 public:
  Keyer(const Profile& profile, const std::vector<SortKey>& keys) : profile_(profile) {
    for (SortKey key : keys) {
      command_ |= key == SortKey::kComm;
      pid_ |= key == SortKey::kPid;
      dso_ |= key == SortKey::kDso;
      function_ |= key == SortKey::kSym;
    }
  }

  RowKey operator()(ThreadId thread, LocationId location) {
    RowKey key;
    if (command_) key.command = command_id(thread);
    if (pid_) key.pid = profile_.threads[thread].pid + 1;
    const Location& where = profile_.locations[location];
    if (dso_) key.dso = where.dso + 1;
    // A symbol is a function of a dso: perf's sym key compares the symbol, which is the dso's.
    if (function_) key.function = where.function + 1;
    return key;
  }

 private:
  std::uint64_t command_id(ThreadId thread) {
    auto [it, fresh] =
        commands_.try_emplace(profile_.threads[thread].command, commands_.size() + 1);
    return it->second;
  }

  const Profile& profile_;
  bool command_ = false, pid_ = false, dso_ = false, function_ = false;
  std::unordered_map<std::string, std::uint64_t> commands_;
};

}  // namespace

std::vector<HistRow> build_hist(const Profile& profile, int event, const HistOptions& options) {
  std::vector<HistRow> rows;
  std::unordered_map<RowKey, std::size_t, RowKeyHash> index;
  Keyer keyer(profile, options.keys);
  std::vector<std::size_t> seen;  // rows this stack has counted in children already
  for (const Stack& stack : profile.stacks) {
    if (stack.event != event || (options.accept && !options.accept(stack))) continue;
    seen.clear();
    const auto frames = profile.frames_of(stack);
    for (std::size_t i = 0; i < frames.size(); ++i) {
      auto [it, fresh] = index.try_emplace(keyer(stack.thread, frames[i]), rows.size());
      if (fresh) rows.push_back({stack.thread, frames[i], 0, 0, 0});
      HistRow& row = rows[it->second];
      if (i == 0) {
        row.self += stack.period;
        row.samples += stack.samples;
      }
      // Recursion puts a row in a stack more than once; children counts the stack once.
      if (std::find(seen.begin(), seen.end(), it->second) == seen.end()) {
        seen.push_back(it->second);
        row.children += stack.period;
      }
    }
  }
  return rows;
}

}  // namespace userperf::report
