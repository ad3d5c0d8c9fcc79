// Helpers for the trace sources' tests (synthetic, calltrace, log): an event of one of them,
// disabled, with its data ring and AUX area mapped, on the engine under test.
#pragma once

#include <cstdint>
#include <vector>

#include "support/aux_events.hpp"

namespace userperf::testing {

inline perf_event_attr source_attr(const char* pmu) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = static_cast<std::uint32_t>(engine().pmu_type(pmu));
  attr.disabled = 1;
  return attr;
}

struct OwnedFd {
  int fd;
  explicit OwnedFd(int f) : fd(f) {}
  ~OwnedFd() {
    if (fd >= 0) event_close(fd);
  }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  operator int() const { return fd; }
};

// The newest bytes of the area (overwrite mode, or a stopped producer), oldest first.
inline std::vector<std::uint8_t> newest_bytes(const MappedAux& m, std::uint64_t* head = nullptr) {
  std::vector<std::uint8_t> out(m.aux_length);
  out.resize(ring::copy_newest_aux(m.view(), out.data(), out.size(), head));
  return out;
}

// Normal mode: what the consumer has not read yet (aux_tail moves past it).
inline std::vector<std::uint8_t> consume(const MappedAux& m) {
  std::vector<std::uint8_t> out(m.aux_length);
  out.resize(ring::consume_aux(m.view(), m.ring.control(), out.data(), out.size()));
  return out;
}

}  // namespace userperf::testing
