// Helpers for tests of the AUX area: an event of the hand-driven "test_aux" PMU with its data ring
// and AUX area mapped through the C API.
#pragma once

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "ring/aux_reader.hpp"
#include "support/engine_under_test.hpp"
#include "support/pmu/test_aux_pmu.hpp"
#include "support/test_events.hpp"

namespace userperf::testing {

inline std::size_t page() {
  return static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

inline perf_event_attr aux_attr() {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = static_cast<std::uint32_t>(test_aux_pmu_type());
  attr.sample_id_all = 1;
  attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  attr.disabled = 1;
  return attr;
}

// Appends bytes to a test_aux event's trace.
inline core::AuxStream::Append aux_write(int fd, const void* bytes, std::size_t len) {
  core::Engine& e = engine();
  core::Event* event = e.event(fd);
  if (event == nullptr) return core::AuxStream::Append::kStopped;
  return static_cast<TestAuxPmu*>(event->pmu)->write(*event, bytes, len);
}

inline void aux_flush(int fd) {
  core::Event* event = engine().event(fd);
  if (event != nullptr) static_cast<TestAuxPmu*>(event->pmu)->flush(*event);
}

// A data ring of data_pages and an AUX area of aux_pages, read-only (overwrite) or read-write.
struct MappedAux {
  MappedRing ring;
  void* aux = MAP_FAILED;
  std::size_t aux_length = 0;
  int map_errno = 0;

  MappedAux(int fd, std::size_t data_pages, std::size_t aux_pages, bool overwrite)
      : ring(fd, data_pages) {
    if (!ring.ok()) return;
    aux_length = aux_pages * page();
    ring.control()->aux_offset = (1 + data_pages) * page();
    ring.control()->aux_size = aux_length;
    aux = event_mmap(nullptr, aux_length, overwrite ? PROT_READ : PROT_READ | PROT_WRITE,
                     MAP_SHARED, fd, static_cast<off_t>(ring.control()->aux_offset));
    if (aux == MAP_FAILED) map_errno = errno;
  }
  ~MappedAux() {
    if (aux != MAP_FAILED) event_munmap(aux, aux_length);
  }
  bool ok() const { return aux != MAP_FAILED; }
  ring::AuxView view() const {
    return {ring.control(), static_cast<const std::uint8_t*>(aux), aux_length};
  }
  std::uint64_t aux_head() const {
    return __atomic_load_n(&ring.control()->aux_head, __ATOMIC_ACQUIRE);
  }
};

// A PERF_RECORD_AUX body.
struct AuxRecord {
  std::uint64_t offset, size, flags;
};

inline std::vector<AuxRecord> aux_records(const std::vector<std::vector<std::uint8_t>>& records) {
  std::vector<AuxRecord> out;
  for (const auto& r : records) {
    if (record_type(r) == PERF_RECORD_AUX) {
      out.push_back({field_at<std::uint64_t>(r, 8), field_at<std::uint64_t>(r, 16),
                     field_at<std::uint64_t>(r, 24)});
    }
  }
  return out;
}

}  // namespace userperf::testing
