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
  switch (aux->lock_bytes()) {
    case ring::AuxRing::Lock::kBusy:
      return;
    case ring::AuxRing::Lock::kNested: {
      const std::uint64_t end = aux->store_end();
      if (end == kSampling) return;
      // Stay clear of the bytes the interrupted store is writing (they wrap onto the oldest).
      const std::uint64_t pos = aux->write_position();
      const std::uint64_t in_flight = end > pos ? end - pos : 0;
      available_ = aux->size() > in_flight ? std::min(aux->history(), aux->size() - in_flight) : 0;
      break;
    }
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
