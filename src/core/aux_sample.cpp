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

void AuxSampleScope::enter(std::uintptr_t self) {
  ring::AuxRing* aux = aux_;
  // Stay clear of the bytes an interrupted store on this thread is writing (they wrap onto the
  // oldest).
  auto clear_of_interrupted_store = [aux] {
    const std::uint64_t end = aux->store_end();
    const std::uint64_t pos = aux->write_position();
    const std::uint64_t in_flight = end > pos ? end - pos : 0;
    return aux->size() > in_flight ? std::min(aux->history(), aux->size() - in_flight) : 0;
  };
  if (ring::AuxWriter* w = aux->writer()) {
    const std::uintptr_t busy = w->busy.load(std::memory_order_relaxed);
    if (ring::AuxWriter::holder(busy) == self) {
      // A signal handler that interrupted this thread's own owned store or copy.
      if ((busy & ring::AuxWriter::kWhatMask) == ring::AuxWriter::kSampling) return;
      available_ = clear_of_interrupted_store();
      return;
    }
  }
  switch (aux->lock_bytes()) {
    case ring::AuxRing::Lock::kBusy:
      return;
    case ring::AuxRing::Lock::kNested:
      if (aux->store_end() == kSampling) return;
      available_ = clear_of_interrupted_store();
      return;
    case ring::AuxRing::Lock::kTaken:
      locked_ = true;
      aux->set_store_end(kSampling);
      available_ = aux->history();
      return;
  }
}

void AuxSampleScope::unlock() {
  aux_->set_store_end(0);
  aux_->unlock_bytes();
}

}  // namespace userperf::core
