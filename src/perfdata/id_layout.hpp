// Where a record carries its event id, as perf computes it (evsel id_pos / is_pos): records map to
// attrs through that id, so every attr of a multi-attr file must put it at the same place.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace userperf::perfdata {

struct IdLayout {
  int sample_pos = -1;   // u64 index after the header of a SAMPLE record; -1: no id
  int trailer_pos = -1;  // u64 index from the end of other records (1 = last); -1: no id
  bool sample_id_all = false;

  static IdLayout of(const perf_event_attr& attr);
  bool operator==(const IdLayout&) const = default;
};

// The id a record carries under `layout`, if it carries one inside its bytes.
std::optional<std::uint64_t> record_id(std::span<const std::uint8_t> record,
                                       const IdLayout& layout);

// Why perf would refuse a file holding attrs `a` and `b` together (empty: compatible).
std::string id_layout_conflict(const perf_event_attr& a, const perf_event_attr& b);

}  // namespace userperf::perfdata
