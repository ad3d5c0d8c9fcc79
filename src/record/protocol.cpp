#include "record/protocol.hpp"

#include <climits>
#include <cstring>

#include "support/hex.hpp"

namespace userperf::record {

namespace {

constexpr std::size_t kMaxEvents = kMaxThreadEvents;

std::string to_hex(const void* bytes, std::size_t size) {
  return support::hex_bytes({static_cast<const std::uint8_t*>(bytes), size});
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool from_hex(const std::string& text, void* out, std::size_t size) {
  if (text.size() != size * 2) return false;
  auto* p = static_cast<std::uint8_t*>(out);
  for (std::size_t i = 0; i < size; ++i) {
    const int hi = hex_digit(text[2 * i]), lo = hex_digit(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    p[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return true;
}

bool parse_u32(const std::string& text, std::uint32_t& out) {
  if (text.empty() || text.size() > 10) return false;
  std::uint64_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (v > UINT32_MAX) return false;
  out = static_cast<std::uint32_t>(v);
  return true;
}

bool power_of_two_or_zero(std::uint32_t v) {
  return (v & (v - 1)) == 0;
}

}  // namespace

// One "key=value" per line. An event: "event=<leader>:<hex attr>:<name>" (leader -1 or an index).
std::string RecordConfig::encode() const {
  std::string out;
  const auto line = [&out](const char* key, const std::string& value) {
    out.append(key).append("=").append(value).append("\n");
  };
  line("version", std::to_string(kProtocolVersion));
  line("ring_pages", std::to_string(ring_pages));
  line("aux_pages", std::to_string(aux_pages));
  line("aux", std::to_string(static_cast<std::uint32_t>(aux)));
  line("flags", std::to_string(flags));
  if (ticker_pid > 0) line("ticker_pid", std::to_string(ticker_pid));
  if (nr_cpus > 0) {
    line("host_limits", std::to_string(max_sample_rate) + ':' + std::to_string(max_stack) + ':' +
                            std::to_string(paranoid) + ':' + std::to_string(nr_cpus));
  }
  if (!bpf_image.empty()) line("bpf_image", to_hex(bpf_image.data(), bpf_image.size()));
  for (const EventConfig& e : events) {
    line("event", std::to_string(e.group_leader) + ':' + to_hex(&e.attr, sizeof e.attr) + ':' +
                      to_hex(e.name.data(), e.name.size()));
  }
  return out;
}

// Without streams: the agent decodes this in every process it enters, and iostreams would bring
// the C++ locale's start-up into each.
Expected<RecordConfig> RecordConfig::decode(const std::string& text) {
  RecordConfig config;
  bool versioned = false;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(at, end - at);
    at = end + 1;
    if (line.empty()) continue;
    const std::size_t eq = line.find('=');
    if (eq == std::string::npos) {
      return make_error(EINVAL, "config line without '=': " + line.substr(0, 40));
    }
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    std::uint32_t number = 0;
    if (key == "version") {
      if (!parse_u32(value, number) || number != kProtocolVersion) {
        return make_error(EINVAL, "config version " + value + ", this agent speaks " +
                                      std::to_string(kProtocolVersion));
      }
      versioned = true;
    } else if (key == "ring_pages" || key == "aux_pages" || key == "aux" || key == "flags" ||
               key == "ticker_pid") {
      if (!parse_u32(value, number) ||
          (key == "ticker_pid" && (number == 0 || number > INT32_MAX))) {
        return make_error(EINVAL, "config " + key + " is not a number: " + value);
      }
      if (key == "ring_pages") config.ring_pages = number;
      if (key == "aux_pages") config.aux_pages = number;
      if (key == "aux") config.aux = static_cast<AuxSource>(number);
      if (key == "flags") config.flags = number;
      if (key == "ticker_pid") config.ticker_pid = static_cast<std::int32_t>(number);
    } else if (key == "host_limits") {
      // rate:stack:paranoid:cpus, paranoid from -1 up
      std::uint32_t parts[4] = {};
      std::size_t from = 0;
      bool ok = true;
      for (int k = 0; k < 4 && ok; ++k) {
        const std::size_t colon = k < 3 ? value.find(':', from) : value.size();
        if (colon == std::string::npos) {
          ok = false;
          break;
        }
        std::string part = value.substr(from, colon - from);
        const bool negative = k == 2 && part == "-1";
        ok = negative || parse_u32(part, parts[k]);
        if (negative) parts[k] = static_cast<std::uint32_t>(-1);
        from = colon + 1;
      }
      if (!ok || parts[3] == 0) {
        return make_error(EINVAL, "config host_limits is not rate:stack:paranoid:cpus: " + value);
      }
      config.max_sample_rate = parts[0];
      config.max_stack = parts[1];
      config.paranoid = static_cast<std::int32_t>(parts[2]);
      config.nr_cpus = parts[3];
    } else if (key == "bpf_image") {
      config.bpf_image.resize(value.size() / 2);
      if (value.empty() || !from_hex(value, config.bpf_image.data(), config.bpf_image.size())) {
        return make_error(EINVAL, "config bpf_image is not hex");
      }
    } else if (key == "event") {
      const std::size_t c1 = value.find(':');
      const std::size_t c2 = c1 == std::string::npos ? c1 : value.find(':', c1 + 1);
      if (c2 == std::string::npos) {
        return make_error(EINVAL, "config event is not leader:attr:name");
      }
      EventConfig e;
      const std::string leader = value.substr(0, c1);
      if (leader == "-1") {
        e.group_leader = -1;
      } else if (parse_u32(leader, number) && number < config.events.size()) {
        e.group_leader = static_cast<int>(number);
      } else {
        return make_error(EINVAL, "config event leader " + leader + " is not an earlier event");
      }
      if (!from_hex(value.substr(c1 + 1, c2 - c1 - 1), &e.attr, sizeof e.attr)) {
        return make_error(
            EINVAL, "config event attr is not " + std::to_string(sizeof e.attr) + " bytes of hex");
      }
      const std::string name = value.substr(c2 + 1);
      e.name.resize(name.size() / 2);
      if (!from_hex(name, e.name.data(), e.name.size())) {
        return make_error(EINVAL, "config event name is not hex");
      }
      config.events.push_back(std::move(e));
    } else {
      return make_error(EINVAL, "unknown config key " + key);
    }
  }
  if (!versioned) {
    return make_error(EINVAL, "config has no version");
  }
  if (config.events.empty() || config.events.size() > kMaxEvents) {
    return make_error(EINVAL, "config must name 1 to " + std::to_string(kMaxEvents) + " events");
  }
  if (config.ring_pages == 0 || !power_of_two_or_zero(config.ring_pages) ||
      !power_of_two_or_zero(config.aux_pages)) {
    return make_error(EINVAL, "config ring_pages and aux_pages must be powers of two");
  }
  if (config.aux > AuxSource::kLog || (config.aux == AuxSource::kNone) != (config.aux_pages == 0)) {
    return make_error(EINVAL, "config aux source and aux_pages disagree");
  }
  return config;
}

}  // namespace userperf::record
