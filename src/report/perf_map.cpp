#include "report/perf_map.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <queue>
#include <sstream>

namespace userperf::report {

namespace {

// 1 to 16 hex digits at the front of `text`, consumed; false when there are none or more.
bool take_hex(std::string_view& text, std::uint64_t& value) {
  std::size_t digits = 0;
  value = 0;
  for (; digits < text.size(); ++digits) {
    const char c = text[digits];
    int v = 0;
    if (c >= '0' && c <= '9') {
      v = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      v = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      v = c - 'A' + 10;
    } else {
      break;
    }
    if (digits == 16) return false;
    value = value << 4 | static_cast<std::uint64_t>(v);
  }
  text.remove_prefix(digits);
  return digits > 0;
}

bool take_space(std::string_view& text) {
  if (text.empty() || text.front() != ' ') return false;
  text.remove_prefix(1);
  return true;
}

}  // namespace

PerfMap PerfMap::parse(std::string_view text) {
  PerfMap map;
  map.loaded_ = true;
  struct Entry {
    std::uint64_t start, end;
    std::uint32_t line;  // index into names_, in file order
  };
  std::vector<Entry> entries;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::uint64_t start = 0, size = 0;
    if (!take_hex(line, start) || !take_space(line) || !take_hex(line, size) || !take_space(line) ||
        line.empty() || size > ~start) {
      ++map.malformed_;
      continue;
    }
    if (size == 0) continue;
    entries.push_back({start, start + size, static_cast<std::uint32_t>(map.names_.size())});
    map.names_.emplace_back(line);
  }
  // The disjoint ranges: between consecutive boundaries, the latest line among the entries that
  // cover the stretch, found with a heap of the entries begun so far (ended ones dropped when
  // they come to its top).
  std::vector<std::uint64_t> bounds;
  bounds.reserve(entries.size() * 2);
  for (const Entry& e : entries) {
    bounds.push_back(e.start);
    bounds.push_back(e.end);
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.start < b.start; });
  auto older = [&](std::size_t a, std::size_t b) { return entries[a].line < entries[b].line; };
  std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(older)> covering(older);
  std::size_t next = 0;
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    const std::uint64_t from = bounds[i], to = bounds[i + 1];
    while (next < entries.size() && entries[next].start <= from) covering.push(next++);
    while (!covering.empty() && entries[covering.top()].end <= from) covering.pop();
    if (covering.empty()) continue;
    const Entry& winner = entries[covering.top()];
    if (!map.ranges_.empty() && map.ranges_.back().name == winner.line &&
        map.ranges_.back().end == from) {
      map.ranges_.back().end = to;
    } else {
      map.ranges_.push_back({from, to, winner.start, winner.line});
    }
  }
  return map;
}

PerfMap PerfMap::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str());
}

bool PerfMap::find(std::uint64_t address, Symbol& out) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                             [](std::uint64_t a, const Range& r) { return a < r.start; });
  if (it == ranges_.begin() || address >= std::prev(it)->end) return false;
  --it;
  out = {&names_[it->name], it->symbol_start};
  return true;
}

bool perf_map_pid(std::string_view path, std::uint32_t& pid) {
  constexpr std::string_view kPrefix = "/tmp/perf-", kSuffix = ".map";
  if (!path.starts_with(kPrefix) || !path.ends_with(kSuffix)) return false;
  const std::string_view digits =
      path.substr(kPrefix.size(), path.size() - kPrefix.size() - kSuffix.size());
  if (digits.empty() || digits.size() > 10) return false;
  std::uint64_t value = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (value > UINT32_MAX) return false;
  pid = static_cast<std::uint32_t>(value);
  return true;
}

std::string perf_map_path(std::uint32_t pid) {
  return "/tmp/perf-" + std::to_string(pid) + ".map";
}

bool named_by_perf_map(std::string_view path, std::uint32_t prot) {
  if (!(prot & PROT_EXEC)) return false;
  return path == "//anon" || path.starts_with("/dev/zero") || path.starts_with("/anon_hugepage") ||
         path == "[heap]" || path.starts_with("[stack") || path.starts_with("/SYSV");
}

}  // namespace userperf::report
