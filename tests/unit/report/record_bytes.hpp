// Builds perf.data records byte by byte for the report's tests: a header, fields in order,
// NUL-terminated strings padded to 8, the sample_id_all trailer (TID, TIME), and the size filled in
// last.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace userperf::report::testing {

class RecordBytes {
 public:
  explicit RecordBytes(std::uint32_t type, std::uint16_t misc = 0) {
    put(perf_event_header{type, misc, 0});
  }
  template <class T>
  RecordBytes& put(const T& value) {
    const std::size_t at = bytes_.size();
    bytes_.resize(at + sizeof value);
    std::memcpy(bytes_.data() + at, &value, sizeof value);
    return *this;
  }
  RecordBytes& bytes(const std::vector<std::uint8_t>& data) {
    bytes_.insert(bytes_.end(), data.begin(), data.end());
    return *this;
  }
  RecordBytes& text(const std::string& s) {  // NUL-terminated, padded to 8
    for (char c : s) bytes_.push_back(static_cast<std::uint8_t>(c));
    do {
      bytes_.push_back(0);
    } while (bytes_.size() % 8 != 0);
    return *this;
  }
  RecordBytes& trailer(std::uint32_t pid, std::uint64_t time) {  // sample_id_all: TID, TIME
    return put(pid).put(pid).put(time);
  }
  std::vector<std::uint8_t> done() {
    const auto size = static_cast<std::uint16_t>(bytes_.size());
    std::memcpy(bytes_.data() + 6, &size, sizeof size);
    return bytes_;
  }

 private:
  std::vector<std::uint8_t> bytes_;
};

// An MMAP2 record of [start, end) from file offset pgoff of `path`, r-x and private, with the
// sample_id_all trailer.
inline std::vector<std::uint8_t> mmap2_record(std::uint32_t pid, std::uint64_t start,
                                              std::uint64_t end, std::uint64_t pgoff,
                                              const std::string& path, std::uint64_t time) {
  RecordBytes r(PERF_RECORD_MMAP2);
  r.put(pid).put(pid).put(start).put(end - start).put(pgoff);
  r.put(std::uint32_t{0}).put(std::uint32_t{0}).put(std::uint64_t{0}).put(std::uint64_t{0});
  r.put(std::uint32_t{5}).put(std::uint32_t{2});  // PROT_READ|PROT_EXEC, MAP_PRIVATE
  return r.text(path).trailer(pid, time).done();
}

// The attr of a file of user-space cpu-clock samples with frame-pointer chains, as perf record -g
// -e cpu-clock:u writes it: IP, TID, TIME, PERIOD, CALLCHAIN; sample_id_all; exclude_kernel.
inline perf_event_attr user_callchain_attr(std::uint64_t period) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = period;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
                     PERF_SAMPLE_CALLCHAIN;
  attr.sample_id_all = 1;
  attr.exclude_kernel = 1;
  return attr;
}

// A sample of user_callchain_attr: ip the leaf, the chain PERF_CONTEXT_USER then `frames`, leaf
// first (callers as return addresses).
inline std::vector<std::uint8_t> user_callchain_sample(std::uint32_t pid, std::uint64_t time,
                                                       std::uint64_t period,
                                                       const std::vector<std::uint64_t>& frames) {
  RecordBytes r(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
  r.put(frames.at(0)).put(pid).put(pid).put(time).put(period);
  r.put(std::uint64_t{frames.size() + 1}).put(static_cast<std::uint64_t>(PERF_CONTEXT_USER));
  for (std::uint64_t frame : frames) r.put(frame);
  return r.done();
}

}  // namespace userperf::report::testing
