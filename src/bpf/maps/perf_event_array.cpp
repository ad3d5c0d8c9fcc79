#include "bpf/maps/perf_event_array.hpp"

namespace userperf::bpf {

Expected<std::unique_ptr<Map>> PerfEventArray::create(const MapSpec& spec,
                                                      std::shared_ptr<FdResolver> resolver) {
  auto slots = allocate_slots(spec);
  if (!slots) return slots.error();
  return std::unique_ptr<Map>(
      new PerfEventArray(spec, std::move(resolver), std::move(slots.value())));
}

}  // namespace userperf::bpf
