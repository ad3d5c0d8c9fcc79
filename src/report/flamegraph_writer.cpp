#include "report/flamegraph_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <numeric>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "report/call_tree.hpp"
#include "report/flamegraph_page.hpp"
#include "report/profile_match.hpp"

namespace userperf::report {

namespace {

// What a frame is, for its color: the page's palette has one band per kind.
enum class FrameKind { kUser = 0, kKernel = 1, kUnknown = 2, kCommand = 3, kRoot = 4 };

// JIT code and anonymous memory: perf's perf-PID.map symbols, memfd and anonymous mappings, or an
// address nothing names.
bool unknown_code(const Dso& dso, const Function& function) {
  const std::string_view path = dso.path;
  return function.name == "[unknown]" || path.empty() || path.starts_with("//anon") ||
         path.starts_with("[anon") || path.starts_with("/memfd:") ||
         (path.starts_with("/tmp/perf-") && path.ends_with(".map")) || dso.name == "[unknown]";
}

// The page's frame table: one row per (name, dso, kind), shared by every event and by both
// profiles of a diff (whose Function ids differ).
class FrameTable {
 public:
  FrameTable() { add("all", "", FrameKind::kRoot); }

  std::uint32_t function(const Profile& profile, FunctionId id) {
    const Function& function = profile.functions[id];
    const Dso& dso = profile.dsos[function.dso];
    const FrameKind kind = dso.kernel                    ? FrameKind::kKernel
                           : unknown_code(dso, function) ? FrameKind::kUnknown
                                                         : FrameKind::kUser;
    return add(function.name, dso.name, kind);
  }
  std::uint32_t command(const std::string& name) { return add(name, "", FrameKind::kCommand); }
  const std::string& name_of(std::uint32_t frame) const { return strings_[names_[frame]]; }

  void write_json(std::string& json) const;

 private:
  std::uint32_t add(const std::string& name, const std::string& dso, FrameKind kind) {
    const std::int32_t dso_index =
        dso.empty() ? -1 : static_cast<std::int32_t>(intern(dsos_, dso_ids_, dso));
    auto [it, fresh] = frames_.try_emplace(
        {intern(strings_, string_ids_, name), dso_index, static_cast<int>(kind)},
        static_cast<std::uint32_t>(names_.size()));
    if (fresh) {
      names_.push_back(std::get<0>(it->first));
      dso_of_.push_back(dso_index);
      kinds_.push_back(static_cast<int>(kind));
    }
    return it->second;
  }
  static std::uint32_t intern(std::vector<std::string>& table,
                              std::unordered_map<std::string, std::uint32_t>& ids,
                              const std::string& value) {
    auto [it, fresh] = ids.try_emplace(value, static_cast<std::uint32_t>(table.size()));
    if (fresh) table.push_back(value);
    return it->second;
  }

  std::vector<std::string> strings_, dsos_;
  std::unordered_map<std::string, std::uint32_t> string_ids_, dso_ids_;
  std::map<std::tuple<std::uint32_t, std::int32_t, int>, std::uint32_t> frames_;
  std::vector<std::uint32_t> names_;
  std::vector<std::int32_t> dso_of_;
  std::vector<int> kinds_;
};

// JSON string contents, safe inside a <script> element: '<', '>' and '&' escaped (no "</script>"
// or "<!--" can end or change it), control characters and U+2028/U+2029 escaped, other UTF-8 kept.
void append_json_string(std::string& json, std::string_view text) {
  json += '"';
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      json += '\\';
      json += static_cast<char>(c);
    } else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      json += escaped;
    } else if (c == 0xe2 && i + 2 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(text[i + 2]) == 0xa8 ||
                static_cast<unsigned char>(text[i + 2]) == 0xa9)) {
      json += static_cast<unsigned char>(text[i + 2]) == 0xa8 ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      json += static_cast<char>(c);
    }
  }
  json += '"';
}

template <typename Values>
void append_json_array(std::string& json, const Values& values) {
  json += '[';
  bool first = true;
  for (const auto value : values) {
    if (!first) json += ',';
    first = false;
    json += std::to_string(value);
  }
  json += ']';
}

// A column of the tree as one JSON string of variable-length base-32 numbers, most significant
// digit first: a digit d is kVarintDigits[32 + d] when more digits follow, kVarintDigits[d] when it
// is the number's last. A node costs one or two characters per column instead of a decimal number
// and a comma (a 100,000-stack page is half the size), and the page decodes it with one loop.
constexpr char kVarintDigits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_";

template <typename Values>
void append_varints(std::string& json, const Values& values);

// A column that is mostly 0 (ascend, self: only where a chain of calls ends) as the varints of
// (zeros skipped, value) pairs, one per non-zero value: a tree whose stacks share little (a
// million samples of 100,000 stacks of random addresses make 3,000,000 nodes) stays under 10 MB.
template <typename Values>
void append_sparse_varints(std::string& json, const Values& values) {
  std::vector<std::uint64_t> pairs;
  std::uint64_t zeros = 0;
  for (const std::uint64_t value : values) {
    if (value == 0) {
      ++zeros;
      continue;
    }
    pairs.push_back(zeros);
    pairs.push_back(value);
    zeros = 0;
  }
  append_varints(json, pairs);
}

template <typename Values>
void append_varints(std::string& json, const Values& values) {
  json += '"';
  char digits[16];
  for (const std::uint64_t value : values) {
    int count = 0;
    std::uint64_t rest = value;
    do {
      const std::uint64_t continuation = count == 0 ? 0 : 32;
      digits[count] = kVarintDigits[(rest & 31) + continuation];
      ++count;
      rest >>= 5;
    } while (rest != 0);
    while (count > 0) json += digits[--count];
  }
  json += '"';
}

void FrameTable::write_json(std::string& json) const {
  json += "\"strings\":[";
  for (std::size_t i = 0; i < strings_.size(); ++i) {
    if (i != 0) json += ',';
    append_json_string(json, strings_[i]);
  }
  json += "],\"dsos\":[";
  for (std::size_t i = 0; i < dsos_.size(); ++i) {
    if (i != 0) json += ',';
    append_json_string(json, dsos_[i]);
  }
  json += "],\"frames\":{\"name\":";
  append_json_array(json, names_);
  json += ",\"dso\":";
  append_json_array(json, dso_of_);
  json += ",\"kind\":";
  append_json_array(json, kinds_);
  json += '}';
}

// One event's tree as the page draws it: the caller-first CallTree of the profile sized (index 0),
// and in a diff the other profile's tree merged into it by frame path (index 1).
struct PageNode {
  std::uint32_t frame = 0;
  std::uint64_t total[2] = {0, 0};
  std::uint64_t self_samples[2] = {0, 0};
  std::uint64_t self_period[2] = {0, 0};
  std::vector<std::uint32_t> children;
};

struct EdgeHash {
  std::size_t operator()(const std::pair<std::uint32_t, std::uint32_t>& edge) const {
    return std::hash<std::uint64_t>()((std::uint64_t{edge.first} << 32) | edge.second);
  }
};

class PageTree {
 public:
  PageTree() : nodes_(1) {}

  void add(const Profile& profile, int event, const std::function<bool(const Stack&)>& accept,
           int which, FrameTable& frames) {
    CallTreeOptions options;
    options.order = CallOrder::kCaller;
    options.accept = accept;
    options.by_command = true;
    const CallTree tree = build_call_tree(profile, event, options);
    // Frames of this profile's functions and commands, looked up once each.
    std::vector<std::int64_t> function_frames(profile.functions.size(), -1);
    std::vector<std::int64_t> command_frames(tree.commands.size(), -1);
    const auto frame_of = [&](const CallTreeNode& node) {
      std::int64_t& frame =
          node.command >= 0 ? command_frames[node.command] : function_frames[node.function];
      if (frame < 0) {
        frame = node.command >= 0 ? frames.command(tree.commands[node.command])
                                  : frames.function(profile, node.function);
      }
      return static_cast<std::uint32_t>(frame);
    };
    // (call tree node, page node) pairs still to merge.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pending{{0, 0}};
    while (!pending.empty()) {
      const auto [from, to] = pending.back();
      pending.pop_back();
      const CallTreeNode& node = tree.nodes[from];
      std::uint64_t children_samples = 0;
      for (const std::uint32_t child : node.children) {
        const CallTreeNode& c = tree.nodes[child];
        children_samples += c.samples;
        pending.emplace_back(child, child_of(to, frame_of(c)));
      }
      PageNode& page = nodes_[to];
      page.total[which] += node.total;
      page.self_period[which] += node.self;
      page.self_samples[which] += node.samples - children_samples;
    }
  }

  // Pre-order, children by the sized total, then the other total, then name.
  void write_json(std::string& json, const FrameTable& frames, bool diff) {
    for (PageNode& node : nodes_) {
      std::sort(node.children.begin(), node.children.end(), [&](std::uint32_t a, std::uint32_t b) {
        const PageNode& x = nodes_[a];
        const PageNode& y = nodes_[b];
        if (x.total[0] != y.total[0]) return x.total[0] > y.total[0];
        if (x.total[1] != y.total[1]) return x.total[1] > y.total[1];
        return frames.name_of(x.frame) < frames.name_of(y.frame);
      });
    }
    std::vector<std::uint32_t> order, frame_of, ascend;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pending{{0, 0}};  // node, depth
    std::uint32_t previous_depth = 0;
    while (!pending.empty()) {
      const auto [index, depth] = pending.back();
      pending.pop_back();
      order.push_back(index);
      frame_of.push_back(nodes_[index].frame);
      ascend.push_back(index == 0 ? 0 : previous_depth + 1 - depth);
      previous_depth = depth;
      const auto& children = nodes_[index].children;
      for (auto it = children.rbegin(); it != children.rend(); ++it) {
        pending.emplace_back(*it, depth + 1);
      }
    }
    json += ",\"nodes\":" + std::to_string(order.size());
    json += ",\"frame\":";
    append_varints(json, frame_of);
    json += ",\"ascend\":";
    append_sparse_varints(json, ascend);
    for (int which = 0; which < (diff ? 2 : 1); ++which) {
      // Periods divided by their gcd: cpu-clock periods are multiples of the sampling period.
      std::uint64_t unit = 0;
      for (const std::uint32_t index : order)
        unit = std::gcd(unit, nodes_[index].self_period[which]);
      if (unit == 0) unit = 1;
      const char* prefix = which == 0 ? "" : "base";
      std::vector<std::uint64_t> values;
      values.reserve(order.size());
      for (const std::uint32_t index : order) values.push_back(nodes_[index].self_samples[which]);
      json += std::string(",\"") + prefix + (which == 0 ? "selfSamples" : "SelfSamples") + "\":";
      append_sparse_varints(json, values);
      values.clear();
      for (const std::uint32_t index : order)
        values.push_back(nodes_[index].self_period[which] / unit);
      json += std::string(",\"") + prefix + (which == 0 ? "selfPeriod" : "SelfPeriod") + "\":";
      append_sparse_varints(json, values);
      json += std::string(",\"") + prefix + (which == 0 ? "periodUnit" : "PeriodUnit") +
              "\":" + std::to_string(unit);
    }
  }

 private:
  // Most nodes have a few children: those are scanned; a node's edges go into the map once it has
  // kManyChildren (the map's misses were a quarter of a 100,000-stack page's time).
  static constexpr std::size_t kManyChildren = 8;

  std::uint32_t child_of(std::uint32_t parent, std::uint32_t frame) {
    const std::vector<std::uint32_t>& siblings = nodes_[parent].children;
    if (siblings.size() < kManyChildren) {
      for (const std::uint32_t child : siblings) {
        if (nodes_[child].frame == frame) return child;
      }
    } else if (const auto it = edges_.find({parent, frame}); it != edges_.end()) {
      return it->second;
    }
    const auto child = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
    nodes_.back().frame = frame;
    std::vector<std::uint32_t>& children = nodes_[parent].children;
    children.push_back(child);
    if (children.size() == kManyChildren) {
      for (const std::uint32_t c : children) edges_.emplace(std::pair{parent, nodes_[c].frame}, c);
    } else if (children.size() > kManyChildren) {
      edges_.emplace(std::pair{parent, frame}, child);
    }
    return child;
  }

  std::vector<PageNode> nodes_;
  std::unordered_map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t, EdgeHash> edges_;
};

// cpu-clock and task-clock count nanoseconds: the page shows their period as time.
bool period_is_time(const perf_event_attr& attr) {
  return attr.type == PERF_TYPE_SOFTWARE &&
         (attr.config == PERF_COUNT_SW_CPU_CLOCK || attr.config == PERF_COUNT_SW_TASK_CLOCK);
}

void append_event_header(std::string& json, const EventProfile& event, const EventProfile* base) {
  json += "{\"name\":";
  append_json_string(json, event.name);
  json += ",\"time\":";
  json += period_is_time(event.attr) ? "true" : "false";
  json += ",\"samples\":" + std::to_string(event.samples);
  json += ",\"period\":" + std::to_string(event.total_period);
  if (base != nullptr) {
    json += ",\"baseSamples\":" + std::to_string(base->samples);
    json += ",\"basePeriod\":" + std::to_string(base->total_period);
  }
}

void append_options(std::string& json, const FlamegraphOptions& options, bool diff) {
  json += "{\"title\":";
  append_json_string(json, options.title);
  json += ",\"subtitle\":";
  append_json_string(json, options.subtitle);
  json += ",\"diff\":";
  json += diff ? "true" : "false";
}

// The page's template around the data: the template's markers replaced by the style, the script
// and the JSON.
Expected<void> write_page(const std::string& json, std::FILE* out) {
  std::string_view page = flamegraph_page_html();
  const std::pair<std::string_view, std::string_view> parts[] = {
      {"/*@STYLE@*/", flamegraph_page_css()},
      {"/*@DATA@*/", json},
      {"/*@SCRIPT@*/", flamegraph_page_js()},
  };
  std::string html;
  html.reserve(page.size() + json.size() + flamegraph_page_js().size());
  for (const auto& [marker, content] : parts) {
    const std::size_t at = page.find(marker);
    if (at == std::string_view::npos) return Error{EINVAL, "flame graph template lacks a marker"};
    html += page.substr(0, at);
    html += content;
    page.remove_prefix(at + marker.size());
  }
  html += page;
  if (std::fwrite(html.data(), 1, html.size(), out) != html.size()) {
    return Error{errno != 0 ? errno : EIO, "write failed"};
  }
  return {};
}

}  // namespace

std::string flamegraph_json(const Profile& profile, const FlamegraphOptions& options) {
  FrameTable frames;
  std::string events;
  for (std::size_t i = 0; i < profile.events.size(); ++i) {
    if (profile.events[i].samples == 0) continue;
    PageTree tree;
    tree.add(profile, static_cast<int>(i), options.accept, 0, frames);
    if (!events.empty()) events += ',';
    append_event_header(events, profile.events[i], nullptr);
    tree.write_json(events, frames, false);
    events += '}';
  }
  std::string json;
  append_options(json, options, false);
  json += ',';
  frames.write_json(json);
  json += ",\"events\":[" + events + "]}";
  return json;
}

std::string diff_flamegraph_json(const Profile& before, const Profile& after,
                                 const FlamegraphOptions& options) {
  FrameTable frames;
  std::string events;
  for (std::size_t i = 0; i < after.events.size(); ++i) {
    if (after.events[i].samples == 0) continue;
    PageTree tree;
    tree.add(after, static_cast<int>(i), options.accept, 0, frames);
    // The base's event of the same name; none leaves every frame new.
    const EventProfile* base = nullptr;
    for (std::size_t j = 0; j < before.events.size() && base == nullptr; ++j) {
      if (same_event(before.events[j], after.events[i])) {
        base = &before.events[j];
        tree.add(before, static_cast<int>(j), options.accept_before, 1, frames);
      }
    }
    const EventProfile empty;
    if (!events.empty()) events += ',';
    append_event_header(events, after.events[i], base != nullptr ? base : &empty);
    tree.write_json(events, frames, true);
    events += '}';
  }
  std::string json;
  append_options(json, options, true);
  json += ',';
  frames.write_json(json);
  json += ",\"events\":[" + events + "]}";
  return json;
}

Expected<void> write_flamegraph(const Profile& profile, const FlamegraphOptions& options,
                                std::FILE* out) {
  return write_page(flamegraph_json(profile, options), out);
}

Expected<void> write_diff_flamegraph(const Profile& before, const Profile& after,
                                     const FlamegraphOptions& options, std::FILE* out) {
  return write_page(diff_flamegraph_json(before, after, options), out);
}

}  // namespace userperf::report
