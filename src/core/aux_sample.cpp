// SIGNAL-SAFE: see aux_sample.hpp.
#include "core/aux_sample.hpp"

#include <algorithm>

#include "core/pmu.hpp"

namespace userperf::core {

namespace {

// store_end() while a sample copies from the area: a nested sample on the same thread sees it.
constexpr std::uint64_t kSampling = ~std::uint64_t{0};

}  // namespace

std::uint64_t Pmu::snapshot_aux(Event& leader, ring::AuxRing& aux, ring::OutputHandle& h,
                                std::uint64_t size) {
  (void)leader;
  aux.copy_out(h, aux.write_position(), size);
  return size;
}

AuxSampleScope::AuxSampleScope(const Event& event) {
  Event* leader = event.aux_event.load(std::memory_order_acquire);
  if (leader == nullptr || leader->state.load(std::memory_order_acquire) != EventState::kActive) {
    return;
  }
  ring::AuxRing* aux = leader->aux_area();
  if (aux == nullptr) return;
  // Stay clear of the bytes an interrupted store on this thread is writing (they wrap onto the
  // oldest).
  auto clear_of_interrupted_store = [aux] {
    const std::uint64_t end = aux->store_end();
    const std::uint64_t pos = aux->write_position();
    const std::uint64_t in_flight = end > pos ? end - pos : 0;
    return aux->size() > in_flight ? std::min(aux->history(), aux->size() - in_flight) : 0;
  };
  const std::uintptr_t self = ring::aux_thread_token();
  // The registered writer is alive: the stream unregisters it under the byte lock before it can be
  // freed, after a grace period this sample's overflow is inside.
  if (ring::AuxWriter* w = aux->writer()) {
    const std::uintptr_t busy = w->busy.load(std::memory_order_relaxed);
    if (ring::AuxWriter::holder(busy) == self) {
      // A signal handler that interrupted this thread's own owned store or copy.
      if ((busy & ring::AuxWriter::kWhatMask) == ring::AuxWriter::kSampling) return;
      available_ = clear_of_interrupted_store();
      leader_ = leader;
      aux_ = aux;
      return;
    }
    if (w->owner.load(std::memory_order_relaxed) == self) {
      w->busy.store(self | ring::AuxWriter::kSampling, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      if (w->owner.load(std::memory_order_relaxed) == self) {  // as AuxStream::append
        owned_ = w;
        available_ = aux->history();
        leader_ = leader;
        aux_ = aux;
        return;
      }
      w->busy.store(0, std::memory_order_release);
    }
  }
  switch (aux->lock_bytes()) {
    case ring::AuxRing::Lock::kBusy:
      return;
    case ring::AuxRing::Lock::kNested:
      if (aux->store_end() == kSampling) return;
      available_ = clear_of_interrupted_store();
      break;
    case ring::AuxRing::Lock::kTaken:
      locked_ = true;
      aux->set_store_end(kSampling);
      available_ = aux->history();
      break;
  }
  leader_ = leader;
  aux_ = aux;
}

AuxSampleScope::~AuxSampleScope() {
  if (owned_ != nullptr) owned_->busy.store(0, std::memory_order_release);
  if (!locked_) return;
  aux_->set_store_end(0);
  aux_->unlock_bytes();
}

void AuxSampleScope::output(ring::OutputHandle& h, std::uint64_t copy, std::uint64_t size) const {
  h.put(size);
  std::uint64_t copied = 0;
  if (copy != 0 && aux_ != nullptr) {
    copied = std::min(leader_->pmu->snapshot_aux(*leader_, *aux_, h, copy), copy);
  }
  h.zero(size - copied);
}

}  // namespace userperf::core
