#include "core/aux_source_pmu.hpp"

#include <cerrno>

namespace userperf::core {

AuxSourcePmu::Source* AuxSourcePmu::source_of(Event& event) const {
  if (event.pmu != this) return nullptr;
  return reinterpret_cast<Source*>(event.pmu_private);
}

void AuxSourcePmu::attach(Event& event, std::unique_ptr<Source> source) {
  event.pmu_private = reinterpret_cast<std::uint64_t>(source.release());
}

int AuxSourcePmu::event_init(Event& event) {
  if (event.attr.config != 0 || event.attr.config1 != 0 || event.attr.config2 != 0) {
    return -EINVAL;
  }
  return 0;
}

int AuxSourcePmu::add(Event& event) {
  Source* source = source_of(event);
  if (source == nullptr) return 0;
  source->stream.start();
  started(*source);
  return 0;
}

void AuxSourcePmu::del(Event& event) {
  Source* source = source_of(event);
  if (source == nullptr) return;
  stopping(*source);
  source->stream.stop();
}

int AuxSourcePmu::setup_aux(Event& event, ring::AuxRing& aux) {
  (void)aux;
  // A running stream begins its first handle on the new area at its next append.
  if (Source* source = source_of(event)) new_area(*source);
  return 0;
}

void AuxSourcePmu::free_aux(Event& event) {
  if (Source* source = source_of(event)) source->stream.release_area();
}

void AuxSourcePmu::destroy(Event& event) {
  Source* source = source_of(event);
  if (source == nullptr) return;
  unpublish(*source);
  engine_.grace_period().synchronize();
  delete source;
  event.pmu_private = 0;
}

}  // namespace userperf::core
