// Builders of kernel records for the perfdata tests: each returns the record's bytes, header
// included, padded to 8 with header.size set.
#pragma once

#include <linux/perf_event.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace userperf::perfdata::testing {

class RecordBuilder {
 public:
  RecordBuilder(std::uint32_t type, std::uint16_t misc) {
    perf_event_header header{type, misc, 0};
    put(&header, sizeof header);
  }
  RecordBuilder& u64(std::uint64_t value) { return put(&value, sizeof value); }
  RecordBuilder& u32(std::uint32_t value) { return put(&value, sizeof value); }
  RecordBuilder& bytes(const void* data, std::size_t size) { return put(data, size); }
  // NUL-terminated, padded to 8.
  RecordBuilder& string(const std::string& text) {
    put(text.c_str(), text.size() + 1);
    return pad();
  }
  RecordBuilder& pad() {
    bytes_.resize((bytes_.size() + 7) / 8 * 8, 0);
    return *this;
  }
  std::vector<std::uint8_t> done() {
    pad();
    const auto size = static_cast<std::uint16_t>(bytes_.size());
    std::memcpy(bytes_.data() + offsetof(perf_event_header, size), &size, sizeof size);
    return bytes_;
  }

 private:
  RecordBuilder& put(const void* data, std::size_t size) {
    // resize + memcpy: g++ 12 reports a false -Wstringop-overflow for insert at -O2.
    const std::size_t at = bytes_.size();
    bytes_.resize(at + size);
    if (size != 0) std::memcpy(bytes_.data() + at, data, size);
    return *this;
  }
  std::vector<std::uint8_t> bytes_;
};

// The sample_id trailer for sample_type TID|TIME|ID (what the tests' attrs use).
struct Trailer {
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::uint64_t time = 0;
  std::uint64_t id = 0;
};

inline RecordBuilder& add_trailer(RecordBuilder& b, const Trailer& t) {
  return b.u32(t.pid).u32(t.tid).u64(t.time).u64(t.id);
}

inline std::vector<std::uint8_t> comm_record(const Trailer& t, const std::string& name) {
  RecordBuilder b(PERF_RECORD_COMM, 0);
  b.u32(t.pid).u32(t.tid).string(name);
  return add_trailer(b, t).done();
}

inline std::vector<std::uint8_t> mmap2_record(const Trailer& t, std::uint64_t start,
                                              std::uint64_t len, std::uint64_t pgoff,
                                              const std::string& path) {
  RecordBuilder b(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
  b.u32(t.pid).u32(t.tid).u64(start).u64(len).u64(pgoff);
  b.u32(0).u32(0).u64(0).u64(0);  // maj, min, ino, ino_generation
  b.u32(PROT_READ | PROT_EXEC).u32(MAP_PRIVATE).string(path);
  return add_trailer(b, t).done();
}

inline std::vector<std::uint8_t> aux_record(const Trailer& t, std::uint64_t offset,
                                            std::uint64_t size, std::uint64_t flags) {
  RecordBuilder b(PERF_RECORD_AUX, 0);
  b.u64(offset).u64(size).u64(flags);
  return add_trailer(b, t).done();
}

inline std::vector<std::uint8_t> itrace_start_record(const Trailer& t) {
  RecordBuilder b(PERF_RECORD_ITRACE_START, 0);
  b.u32(t.pid).u32(t.tid);
  return add_trailer(b, t).done();
}

inline std::vector<std::uint8_t> lost_samples_record(const Trailer& t, std::uint64_t lost) {
  RecordBuilder b(PERF_RECORD_LOST_SAMPLES, 0);
  b.u64(lost);
  return add_trailer(b, t).done();
}

// A sample of sample_type IP|TID|TIME|ID|PERIOD (+ AUX when `aux` is non-empty or `with_aux`).
inline std::vector<std::uint8_t> sample_record(const Trailer& t, std::uint64_t ip,
                                               std::uint64_t period, bool with_aux,
                                               const std::vector<std::uint8_t>& aux = {}) {
  RecordBuilder b(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
  b.u64(ip).u32(t.pid).u32(t.tid).u64(t.time).u64(t.id).u64(period);
  // The kernel's aux_size counts the padding to 8.
  if (with_aux) b.u64((aux.size() + 7) / 8 * 8).bytes(aux.data(), aux.size()).pad();
  return b.done();
}

inline constexpr std::uint64_t kTrailerType = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID;
inline constexpr std::uint64_t kSampleType =
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_PERIOD;

}  // namespace userperf::perfdata::testing
