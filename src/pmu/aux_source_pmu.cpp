#include "pmu/aux_source_pmu.hpp"

namespace userperf::pmu {

AuxSourcePmu::Source* AuxSourcePmu::source_of(core::Event& event) const {
  if (event.pmu != this) return nullptr;
  return reinterpret_cast<Source*>(event.pmu_private);
}

void AuxSourcePmu::attach(core::Event& event, std::unique_ptr<Source> source) {
  event.pmu_private = reinterpret_cast<std::uint64_t>(source.release());
}

int AuxSourcePmu::add(core::Event& event) {
  Source* source = source_of(event);
  if (source == nullptr) return 0;
  source->stream.start();
  started(*source);
  return 0;
}

void AuxSourcePmu::del(core::Event& event) {
  Source* source = source_of(event);
  if (source == nullptr) return;
  stopping(*source);
  source->stream.stop();
}

int AuxSourcePmu::setup_aux(core::Event& event, ring::AuxRing& aux) {
  (void)aux;
  // A running stream begins its first handle on the new area at its next append.
  if (Source* source = source_of(event)) new_area(*source);
  return 0;
}

void AuxSourcePmu::free_aux(core::Event& event) {
  if (Source* source = source_of(event)) source->stream.release_area();
}

void AuxSourcePmu::destroy(core::Event& event) {
  Source* source = source_of(event);
  if (source == nullptr) return;
  unpublish(*source);
  engine_.grace_period().synchronize();
  delete source;
  event.pmu_private = 0;
}

}  // namespace userperf::pmu
