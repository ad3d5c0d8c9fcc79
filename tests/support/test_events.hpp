// Helpers for tests that drive the engine under test (engine_under_test.hpp) with the test PMU.
#pragma once

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/engine.hpp"
#include "ring/reader.hpp"
#include "support/engine_under_test.hpp"
#include "support/pmu/test_pmu.hpp"

namespace userperf::testing {

inline perf_event_attr test_attr(std::uint64_t sample_type, std::uint64_t period = 1) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = static_cast<std::uint32_t>(test_pmu_type());
  attr.sample_period = period;
  attr.sample_type = sample_type;
  return attr;
}

// Counts `delta` into a test-PMU event; each period crossed writes a sample from `data`.
inline std::uint64_t fire(int fd, std::uint64_t delta, const core::SampleData& data = {}) {
  core::Engine& e = engine();
  core::Event* event = e.event(fd);
  if (event == nullptr) return 0;
  return static_cast<TestPmu*>(event->pmu)->count(e, *event, delta, data);
}

// A mapped userperf ring: unmaps on destruction.
struct MappedRing {
  void* base = MAP_FAILED;
  std::size_t length = 0;
  ring::RingView view;

  MappedRing(int fd, std::size_t data_pages, int prot = PROT_READ | PROT_WRITE) {
    length = (1 + data_pages) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    base = event_mmap(nullptr, length, prot, MAP_SHARED, fd, 0);
    if (base != MAP_FAILED) ring::make_ring_view(base, length, view);
  }
  ~MappedRing() {
    if (base != MAP_FAILED) event_munmap(base, length);
  }
  bool ok() const { return base != MAP_FAILED; }
  perf_event_mmap_page* control() const { return static_cast<perf_event_mmap_page*>(base); }

  // Every record currently readable, consumed.
  std::vector<std::vector<std::uint8_t>> drain() {
    std::vector<std::vector<std::uint8_t>> out;
    ring::Reader reader(view);
    ring::drain(reader, [&](const ring::Record& r) {
      out.emplace_back(r.bytes.begin(), r.bytes.end());
      return true;
    });
    return out;
  }
};

inline std::uint32_t record_type(const std::vector<std::uint8_t>& rec) {
  return reinterpret_cast<const perf_event_header*>(rec.data())->type;
}

template <class T>
T field_at(const std::vector<std::uint8_t>& rec, std::size_t offset) {
  T v{};
  std::memcpy(&v, rec.data() + offset, sizeof v);
  return v;
}

}  // namespace userperf::testing
