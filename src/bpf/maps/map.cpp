// Map::create: the kernel's map_create checks, then the type's preallocated implementation.
#include "bpf/maps/map.hpp"

#include <atomic>

#include "bpf/maps/array_map.hpp"
#include "bpf/maps/cgroup_array.hpp"
#include "bpf/maps/hash_map.hpp"
#include "bpf/maps/map_create_check.hpp"
#include "bpf/maps/map_in_map.hpp"
#include "bpf/maps/perf_event_array.hpp"
#include "bpf/maps/prog_array.hpp"
#include "bpf/maps/ringbuf_map.hpp"
#include "bpf/maps/stack_trace_map.hpp"

namespace userperf::bpf {
namespace {
std::atomic<std::uint32_t> next_map_id{1};
}  // namespace

Map::Map(const MapSpec& spec)
    : spec_(spec), id_(next_map_id.fetch_add(1, std::memory_order_relaxed)) {}

Expected<std::unique_ptr<Map>> Map::create(const MapSpec& spec,
                                           std::shared_ptr<FdResolver> resolver,
                                           std::shared_ptr<ProgResolver> programs,
                                           std::shared_ptr<FdResolver> maps) {
  possible_cpus();  // fill the cache before any program reads it from a signal handler
  Expected<MapSpec> checked = check_map_create(spec);
  if (!checked) return checked.error();
  const MapSpec& fixed = checked.value();
  switch (fixed.type) {
    case BPF_MAP_TYPE_ARRAY:
    case BPF_MAP_TYPE_PERCPU_ARRAY:
      return ArrayMap::create(fixed);
    case BPF_MAP_TYPE_HASH:
    case BPF_MAP_TYPE_PERCPU_HASH:
    case BPF_MAP_TYPE_LRU_HASH:
      return HashMap::create(fixed);
    case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
      if (resolver == nullptr) {
        return make_error(
            EINVAL, "map '" + fixed.name + "': a PERF_EVENT_ARRAY needs a descriptor resolver");
      }
      return PerfEventArray::create(fixed, std::move(resolver));
    case BPF_MAP_TYPE_PROG_ARRAY:
      if (programs == nullptr) {
        return make_error(EINVAL,
                          "map '" + fixed.name + "': a PROG_ARRAY needs a program resolver");
      }
      return ProgArray::create(fixed, std::move(programs));
    case BPF_MAP_TYPE_ARRAY_OF_MAPS:
    case BPF_MAP_TYPE_HASH_OF_MAPS:
      if (maps == nullptr) {
        return make_error(EINVAL, "map '" + fixed.name + "': a map-in-map needs a map resolver");
      }
      if (fixed.type == BPF_MAP_TYPE_ARRAY_OF_MAPS) {
        return ArrayOfMaps::create(fixed, std::move(maps));
      }
      return HashOfMaps::create(fixed, std::move(maps));
    case BPF_MAP_TYPE_CGROUP_ARRAY:
      return CgroupArray::create(fixed);
    case BPF_MAP_TYPE_STACK_TRACE:
      return StackTraceMap::create(fixed);
    case BPF_MAP_TYPE_RINGBUF:
      return RingbufMap::create(fixed);
    default:
      return make_error(EINVAL, "map '" + fixed.name + "': type " + std::to_string(fixed.type) +
                                    " is not supported");
  }
}

std::uint32_t Map::user_value_size() const {
  if (spec_.type == BPF_MAP_TYPE_PERCPU_ARRAY || spec_.type == BPF_MAP_TYPE_PERCPU_HASH) {
    return round_up_8(spec_.value_size) * possible_cpus();
  }
  return spec_.value_size;
}

}  // namespace userperf::bpf
