// Helpers for the user tracepoint tests: the format callback's captures, a tracepoint event of the
// calling thread with its ring mapped, and the RAW payloads of the samples it holds.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "pmu/tracepoint/tracepoint_pmu.hpp"
#include "support/test_events.hpp"
#include "userperf/tracepoint.h"
#include "userperf/userperf.h"

namespace userperf::testing {

// Every (id, format) the format callback received.
class FormatLog {
 public:
  static FormatLog& instance() {
    static FormatLog log;
    return log;
  }
  static void callback(std::uint64_t id, const char* format, std::size_t size) {
    std::lock_guard lock(instance().mutex_);
    instance().entries_.emplace_back(id, std::string(format, size));
  }
  // The formats received for `id`, in order.
  std::vector<std::string> of(std::uint64_t id) {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [entry_id, text] : entries_) {
      if (entry_id == id) out.push_back(text);
    }
    return out;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<std::uint64_t, std::string>> entries_;
};

inline void install_format_log() {
  pmu::tracepoint_set_format_callback(&FormatLog::callback);
}

inline perf_event_attr tracepoint_attr(std::uint64_t id) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.config = id;
  attr.sample_period = 1;
  attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_RAW;
  return attr;
}

// A tracepoint event on the calling thread with 4 data pages mapped.
struct ThreadTracepointEvent {
  int fd;
  MappedRing ring;
  explicit ThreadTracepointEvent(std::uint64_t id)
      : fd(open_event(id)), ring(fd < 0 ? -1 : fd, 4) {}
  ~ThreadTracepointEvent() { close(); }
  void close() {
    if (fd >= 0) userperf_close(fd);
    fd = -1;
  }
  static int open_event(std::uint64_t id) {
    perf_event_attr attr = tracepoint_attr(id);
    return userperf_perf_event_open(&attr, 0, -1, -1, 0);
  }

  struct Sample {
    std::uint32_t pid = 0, tid = 0;
    std::vector<std::uint8_t> raw;  // the RAW field's bytes after its u32 size (padding included)
  };
  // The samples in the ring (sample_type TID|RAW), consumed.
  std::vector<Sample> samples() {
    std::vector<Sample> out;
    for (const auto& rec : ring.drain()) {
      if (record_type(rec) != PERF_RECORD_SAMPLE) continue;
      Sample s;
      s.pid = field_at<std::uint32_t>(rec, 8);
      s.tid = field_at<std::uint32_t>(rec, 12);
      const auto size = field_at<std::uint32_t>(rec, 16);
      s.raw.assign(rec.begin() + 20, rec.begin() + 20 + size);
      out.push_back(std::move(s));
    }
    return out;
  }
};

// Little-endian builder of an expected tracepoint record.
struct Bytes {
  std::vector<std::uint8_t> v;
  template <class T>
  Bytes& put(T value) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
    v.insert(v.end(), p, p + sizeof value);
    return *this;
  }
  Bytes& text(const char* s, std::size_t n) {
    v.insert(v.end(), s, s + n);
    return *this;
  }
  Bytes& common(std::uint16_t id, pid_t tid) {
    return put<std::uint16_t>(id).put<std::uint8_t>(0).put<std::uint8_t>(0).put<std::int32_t>(tid);
  }
  // The RAW padding: zeros until 4 + size is a multiple of 8.
  std::vector<std::uint8_t> padded() const {
    std::vector<std::uint8_t> out = v;
    while ((4 + out.size()) % 8 != 0) out.push_back(0);
    return out;
  }
};

inline std::uint32_t data_loc(std::uint32_t len, std::uint32_t offset) {
  return (len << 16) | offset;
}

}  // namespace userperf::testing
