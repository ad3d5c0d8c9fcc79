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
#include "core/pmu.hpp"
#include "ring/aux_ring.hpp"
#include "ring/output_handle.hpp"

namespace userperf::core {

class AuxSampleScope {
 public:
  // Inline: the owner's path (a sample on the thread that appends to the area, the common case)
  // is a few loads and two plain stores; everything else is enter().
  explicit AuxSampleScope(const Event& event) {
    Event* leader = event.aux_event.load(std::memory_order_acquire);
    if (leader == nullptr || leader->state.load(std::memory_order_acquire) != EventState::kActive) {
      return;
    }
    ring::AuxRing* aux = leader->aux_area();
    if (aux == nullptr) return;
    leader_ = leader;
    aux_ = aux;
    // The registered writer is alive: the stream unregisters it under the byte lock before it can
    // be freed, after a grace period this sample's overflow is inside.
    ring::AuxWriter* w = aux->writer();
    const std::uintptr_t self = ring::aux_thread_token();
    if (w != nullptr && w->busy.load(std::memory_order_relaxed) == 0 &&
        w->owner.load(std::memory_order_relaxed) == self) {
      w->busy.store(self | ring::AuxWriter::kSampling, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      // A revoker stores owner = 0, then runs a heavy barrier before it reads `busy`: either it
      // sees this thread inside, or this load sees 0 (as AuxStream::append).
      if (w->owner.load(std::memory_order_relaxed) == self) {
        owned_ = w;
        available_ = aux->history();
        return;
      }
      w->busy.store(0, std::memory_order_release);
    }
    enter(self);
  }
  ~AuxSampleScope() {
    if (owned_ != nullptr) {
      owned_->busy.store(0, std::memory_order_release);
    } else if (locked_) {
      unlock();
    }
  }
  AuxSampleScope(const AuxSampleScope&) = delete;
  AuxSampleScope& operator=(const AuxSampleScope&) = delete;

  // Trace bytes a sample may carry now (before the size limits of the record and the attr).
  std::uint64_t available() const { return available_; }
  // perf_aux_sample_output: the size word, the newest `copy` bytes through the leader PMU's
  // snapshot_aux, then zeros up to `size` (copy rounded up to 8).
  void output(ring::OutputHandle& h, std::uint64_t copy, std::uint64_t size) const {
    h.put(size);
    std::uint64_t copied = 0;
    if (copy != 0 && available_ != 0) {
      copied = leader_->pmu->snapshot_aux(*leader_, *aux_, h, copy);
      if (copied > copy) copied = copy;
    }
    if (copied != size) h.zero(size - copied);
  }

 private:
  // Every case but the owner's: a sample nested in this thread's own store or copy, or the byte
  // lock. Leaves available_ 0 (and leader_ unused) when the sample carries nothing.
  void enter(std::uintptr_t self);
  void unlock();

  Event* leader_ = nullptr;
  ring::AuxRing* aux_ = nullptr;
  bool locked_ = false;
  ring::AuxWriter* owned_ = nullptr;  // the owner's busy mark to clear
  std::uint64_t available_ = 0;
};

}  // namespace userperf::core
