#include "report/hist.hpp"

#include <unordered_map>

#include "report/flat_id_map.hpp"

namespace userperf::report {

namespace {

// Row keys in two halves, each numbered densely and cached: the thread's part (command, pid) per
// ThreadId, the location's part (dso, function) per LocationId. A frame's row is then two array
// reads and one lookup in a flat map, with no string hashed per frame.
class RowKeys {
 public:
  RowKeys(const Profile& profile, const std::vector<SortKey>& keys) : profile_(profile) {
    for (SortKey key : keys) {
      command_ |= key == SortKey::kComm;
      pid_ |= key == SortKey::kPid;
      dso_ |= key == SortKey::kDso;
      function_ |= key == SortKey::kSym;
    }
    thread_keys_.assign(profile.threads.size(), FlatIdMap::kNone);
    location_keys_.assign(profile.locations.size(), FlatIdMap::kNone);
  }

  std::uint64_t operator()(ThreadId thread, LocationId location) {
    return std::uint64_t{thread_key(thread)} << 32 | location_key(location);
  }

 private:
  std::uint32_t thread_key(ThreadId thread) {
    std::uint32_t& key = thread_keys_[thread];
    if (key == FlatIdMap::kNone) {
      const Thread& t = profile_.threads[thread];
      std::string name = pid_ ? std::to_string(t.pid) : std::string();
      name += '\0';
      if (command_) name += t.command;
      key = number(thread_parts_, std::move(name));
    }
    return key;
  }

  std::uint32_t location_key(LocationId location) {
    std::uint32_t& key = location_keys_[location];
    if (key == FlatIdMap::kNone) {
      const Location& l = profile_.locations[location];
      // A function is one dso's, so sym alone also tells dsos apart, as perf's sym key does.
      const std::uint64_t dso = dso_ ? l.dso + std::uint64_t{1} : 0;
      const std::uint64_t function = function_ ? l.function + std::uint64_t{1} : 0;
      key = number(location_parts_, std::to_string(dso) + ':' + std::to_string(function));
    }
    return key;
  }

  static std::uint32_t number(std::unordered_map<std::string, std::uint32_t>& parts,
                              std::string part) {
    return parts.try_emplace(std::move(part), static_cast<std::uint32_t>(parts.size()))
        .first->second;
  }

  const Profile& profile_;
  bool command_ = false, pid_ = false, dso_ = false, function_ = false;
  std::vector<std::uint32_t> thread_keys_, location_keys_;
  std::unordered_map<std::string, std::uint32_t> thread_parts_, location_parts_;
};

}  // namespace

std::vector<HistRow> build_hist(const Profile& profile, int event, const HistOptions& options) {
  std::vector<HistRow> rows;
  FlatIdMap index;
  RowKeys keys(profile, options.keys);
  // The last stack each row counted its children period for: recursion puts a row in a stack
  // more than once, and children counts the stack once.
  std::vector<std::size_t> counted_in;
  for (std::size_t s = 0; s < profile.stacks.size(); ++s) {
    const Stack& stack = profile.stacks[s];
    if (stack.event != event || (options.accept && !options.accept(stack))) continue;
    const auto frames = profile.frames_of(stack);
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const std::uint64_t key = keys(stack.thread, frames[i]);
      std::uint32_t row = index.find(key);
      if (row == FlatIdMap::kNone) {
        row = static_cast<std::uint32_t>(rows.size());
        index.insert(key, row);
        rows.push_back({stack.thread, frames[i], 0, 0, 0});
        counted_in.push_back(SIZE_MAX);
      }
      if (i == 0) {
        rows[row].self += stack.period;
        rows[row].samples += stack.samples;
      }
      if (counted_in[row] != s) {
        counted_in[row] = s;
        rows[row].children += stack.period;
      }
    }
  }
  return rows;
}

}  // namespace userperf::report
