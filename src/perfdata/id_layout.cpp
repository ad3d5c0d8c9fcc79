#include "perfdata/id_layout.hpp"

#include <algorithm>
#include <cstring>

namespace userperf::perfdata {

IdLayout IdLayout::of(const perf_event_attr& attr) {
  const std::uint64_t t = attr.sample_type;
  IdLayout layout;
  layout.sample_id_all = attr.sample_id_all != 0;
  if (t & PERF_SAMPLE_IDENTIFIER) {
    layout.sample_pos = 0;
    layout.trailer_pos = 1;
  } else if (t & PERF_SAMPLE_ID) {
    layout.sample_pos = !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID) +
                        !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ADDR);
    layout.trailer_pos = 1 + !!(t & PERF_SAMPLE_CPU) + !!(t & PERF_SAMPLE_STREAM_ID);
  }
  return layout;
}

std::optional<std::uint64_t> record_id(std::span<const std::uint8_t> record,
                                       const IdLayout& layout) {
  if (record.size() < sizeof(perf_event_header)) return std::nullopt;
  perf_event_header header;
  std::memcpy(&header, record.data(), sizeof header);
  const std::size_t size = std::min<std::size_t>(header.size, record.size());
  std::size_t at = 0;
  if (header.type == PERF_RECORD_SAMPLE) {
    if (layout.sample_pos < 0) return std::nullopt;
    at = sizeof header + 8 * static_cast<std::size_t>(layout.sample_pos);
  } else {
    if (header.type >= PERF_RECORD_MAX || !layout.sample_id_all || layout.trailer_pos < 0) {
      return std::nullopt;
    }
    const std::size_t back = 8 * static_cast<std::size_t>(layout.trailer_pos);
    if (size < sizeof header + back) return std::nullopt;
    at = size - back;
  }
  if (at + 8 > size) return std::nullopt;
  std::uint64_t id;
  std::memcpy(&id, record.data() + at, sizeof id);
  return id;
}

std::string id_layout_conflict(const perf_event_attr& a, const perf_event_attr& b) {
  const IdLayout la = IdLayout::of(a);
  const IdLayout lb = IdLayout::of(b);
  if (la.sample_id_all != lb.sample_id_all) return "attrs disagree on sample_id_all";
  if (la.sample_pos < 0 || lb.sample_pos < 0) {
    return "several attrs need PERF_SAMPLE_ID or PERF_SAMPLE_IDENTIFIER in each";
  }
  if (la.sample_pos != lb.sample_pos || la.trailer_pos != lb.trailer_pos) {
    return "attrs put the sample id at different positions (use PERF_SAMPLE_IDENTIFIER)";
  }
  return {};
}

}  // namespace userperf::perfdata
