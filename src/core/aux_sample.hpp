// AUX sampling (PERF_SAMPLE_AUX, kernel-perf-spec §5): a sample carries the newest bytes of its
// group leader's trace. AuxSampleScope holds the leader's AUX area from the moment the sample is
// sized until its bytes are copied, so that the size written is the size copied:
// - the leader is not active, has no AUX area, or another thread holds the area too long: 0 bytes;
// - this thread is already copying from the area (a sample nested in a sample's snapshot, the
//   kernel's aux_in_sampling): 0 bytes;
// - this thread interrupted its own store into the area: the sample copies the newest complete
//   bytes that the interrupted store is not overwriting.
// The thread that owns the area's byte lock (ring::AuxWriter: the thread that appends; the
// kernel's sampler runs on the AUX writer's CPU too) samples without taking the lock: it marks
// itself busy, as its own appends do. Any other thread takes the byte lock, which revokes that
// bias and waits for the owner to leave its store.
// SIGNAL-SAFE.
#pragma once

#include <cstdint>

#include "core/event.hpp"
#include "ring/aux_ring.hpp"
#include "ring/output_handle.hpp"

namespace userperf::core {

class AuxSampleScope {
 public:
  explicit AuxSampleScope(const Event& event);
  ~AuxSampleScope();
  AuxSampleScope(const AuxSampleScope&) = delete;
  AuxSampleScope& operator=(const AuxSampleScope&) = delete;

  // Trace bytes a sample may carry now (before the size limits of the record and the attr).
  std::uint64_t available() const { return available_; }
  // perf_aux_sample_output: the newest `copy` bytes through the leader PMU's snapshot_aux, then
  // zeros up to `size` (copy rounded up to 8).
  void output(ring::OutputHandle& h, std::uint64_t copy, std::uint64_t size) const;

 private:
  Event* leader_ = nullptr;
  ring::AuxRing* aux_ = nullptr;
  bool locked_ = false;
  ring::AuxWriter* owned_ = nullptr;  // the owner's busy mark to clear
  std::uint64_t available_ = 0;
};

}  // namespace userperf::core
