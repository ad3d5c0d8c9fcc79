#include "bpf/maps/map_create_check.hpp"

#include <unistd.h>

#include <climits>
#include <string>

#include "bpf/isa/encoding.hpp"
#include "bpf/maps/map.hpp"
#include "support/hex.hpp"

namespace userperf::bpf {
namespace {

constexpr std::uint32_t kAccessMask =
    BPF_F_RDONLY | BPF_F_RDONLY_PROG | BPF_F_WRONLY | BPF_F_WRONLY_PROG;  // BPF_F_ACCESS_MASK
constexpr std::uint32_t kArrayCreateFlagMask =
    BPF_F_NUMA_NODE | BPF_F_MMAPABLE | kAccessMask | BPF_F_PRESERVE_ELEMS | BPF_F_INNER_MAP;
constexpr std::uint32_t kHtabCreateFlagMask =
    BPF_F_NO_PREALLOC | BPF_F_NO_COMMON_LRU | BPF_F_NUMA_NODE | kAccessMask | BPF_F_ZERO_SEED;
constexpr std::uint32_t kStackCreateFlagMask =
    BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY | BPF_F_STACK_BUILD_ID;

Error invalid(const MapSpec& spec, const std::string& why) {
  return make_error(EINVAL, "map '" + spec.name + "': " + why);
}

// bpf_map_flags_access_ok(): a program cannot be both read-only and write-only.
bool access_ok(std::uint32_t flags) {
  return (flags & (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)) !=
         (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG);
}

Expected<MapSpec> check_array(MapSpec spec) {
  const bool percpu = spec.type == BPF_MAP_TYPE_PERCPU_ARRAY;
  const bool perf_array = spec.type == BPF_MAP_TYPE_PERF_EVENT_ARRAY;
  const bool fd_array = perf_array || spec.type == BPF_MAP_TYPE_PROG_ARRAY ||
                        spec.type == BPF_MAP_TYPE_ARRAY_OF_MAPS ||
                        spec.type == BPF_MAP_TYPE_CGROUP_ARRAY;
  if (fd_array) {  // fd_array_map_alloc_check
    const char* type = perf_array                               ? "PERF_EVENT_ARRAY"
                       : spec.type == BPF_MAP_TYPE_PROG_ARRAY   ? "PROG_ARRAY"
                       : spec.type == BPF_MAP_TYPE_CGROUP_ARRAY ? "CGROUP_ARRAY"
                                                                : "ARRAY_OF_MAPS";
    if (spec.value_size != sizeof(std::uint32_t)) {
      return invalid(spec, std::string("a ") + type +
                               "'s value_size must be 4 (a descriptor), not " +
                               std::to_string(spec.value_size));
    }
    if (spec.map_flags & (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)) {
      return invalid(spec,
                     std::string("a ") + type + " takes no BPF_F_RDONLY_PROG/BPF_F_WRONLY_PROG");
    }
  }
  if (spec.max_entries == 0) return invalid(spec, "max_entries is 0");
  if (spec.key_size != sizeof(std::uint32_t)) {
    return invalid(spec, "an array's key_size must be 4, not " + std::to_string(spec.key_size));
  }
  if (spec.value_size == 0) return invalid(spec, "value_size is 0");
  if (spec.map_flags & ~kArrayCreateFlagMask) {
    return invalid(spec, "unknown flags " + support::hex(spec.map_flags & ~kArrayCreateFlagMask));
  }
  if (!access_ok(spec.map_flags)) {
    return invalid(spec, "BPF_F_RDONLY_PROG and BPF_F_WRONLY_PROG together");
  }
  // BPF_F_NUMA_NODE names node 0 here (MapSpec has no node field); per-CPU memory has no node.
  if (percpu && (spec.map_flags & BPF_F_NUMA_NODE)) {
    return invalid(spec, "a per-CPU array takes no BPF_F_NUMA_NODE");
  }
  if (spec.type != BPF_MAP_TYPE_ARRAY && (spec.map_flags & (BPF_F_MMAPABLE | BPF_F_INNER_MAP))) {
    return invalid(spec, "BPF_F_MMAPABLE and BPF_F_INNER_MAP are for BPF_MAP_TYPE_ARRAY only");
  }
  if (!perf_array && (spec.map_flags & BPF_F_PRESERVE_ELEMS)) {
    return invalid(spec, "BPF_F_PRESERVE_ELEMS is for BPF_MAP_TYPE_PERF_EVENT_ARRAY only");
  }
  if (spec.value_size > INT_MAX) {
    return make_error(E2BIG, "map '" + spec.name + "': value_size " +
                                 std::to_string(spec.value_size) + " exceeds INT_MAX");
  }
  if (percpu && round_up_8(spec.value_size) > kPcpuMinUnitSize) {
    return make_error(E2BIG, "map '" + spec.name + "': per-CPU value_size " +
                                 std::to_string(spec.value_size) + " exceeds " +
                                 std::to_string(kPcpuMinUnitSize));
  }
  return spec;
}

Expected<MapSpec> check_hash(MapSpec spec) {
  const bool percpu = spec.type == BPF_MAP_TYPE_PERCPU_HASH;
  const bool lru = spec.type == BPF_MAP_TYPE_LRU_HASH;
  const bool percpu_lru = spec.map_flags & BPF_F_NO_COMMON_LRU;
  const bool prealloc = !(spec.map_flags & BPF_F_NO_PREALLOC);
  if (spec.map_flags & ~kHtabCreateFlagMask) {
    return invalid(spec, "unknown flags " + support::hex(spec.map_flags & ~kHtabCreateFlagMask));
  }
  if (!access_ok(spec.map_flags)) {
    return invalid(spec, "BPF_F_RDONLY_PROG and BPF_F_WRONLY_PROG together");
  }
  if (!lru && percpu_lru) return invalid(spec, "BPF_F_NO_COMMON_LRU is for LRU maps only");
  if (lru && !prealloc) {
    return make_error(kEnotsupp, "map '" + spec.name + "': an LRU map cannot be BPF_F_NO_PREALLOC");
  }
  if ((spec.map_flags & BPF_F_NUMA_NODE) && (percpu || percpu_lru)) {
    return invalid(spec, "BPF_F_NUMA_NODE with per-CPU values or per-CPU LRU lists");
  }
  if (spec.max_entries == 0) return invalid(spec, "max_entries is 0");
  if (spec.key_size == 0) return invalid(spec, "key_size is 0");
  if (spec.value_size == 0) return invalid(spec, "value_size is 0");
  if (std::uint64_t{spec.key_size} + spec.value_size >= kKmallocMaxSize - kHtabElemSize) {
    return make_error(E2BIG, "map '" + spec.name + "': key_size + value_size " +
                                 std::to_string(std::uint64_t{spec.key_size} + spec.value_size) +
                                 " leaves no room in a kmalloc-able element");
  }
  if (percpu && round_up_8(spec.value_size) > kPcpuMinUnitSize) {
    return make_error(E2BIG, "map '" + spec.name + "': per-CPU value_size " +
                                 std::to_string(spec.value_size) + " exceeds " +
                                 std::to_string(kPcpuMinUnitSize));
  }
  if (percpu_lru) {
    // Every CPU's LRU list gets the same number (>= 1) of elements.
    const std::uint64_t cpus = possible_cpus();
    std::uint64_t rounded = (spec.max_entries + cpus - 1) / cpus * cpus;
    if (rounded > UINT32_MAX) rounded = spec.max_entries / cpus * cpus;
    spec.max_entries = static_cast<std::uint32_t>(rounded);
  }
  if (spec.max_entries > kMaxHashBuckets) {
    return make_error(E2BIG, "map '" + spec.name + "': max_entries " +
                                 std::to_string(spec.max_entries) + " exceeds 2^31");
  }
  return spec;
}

// bpf_map_meta_alloc: the outer map's template stands for the kernel's inner_map_fd, a map that
// exists (so it passed map_create itself) and is no map-in-map; the outer map's value is a
// descriptor (4 bytes, as fd_array_map_alloc_check and htab_of_map_alloc want).
Expected<MapSpec> check_map_in_map(const MapSpec& spec) {
  // The outer map's own checks first (map_alloc_check), then its inner map (map_alloc).
  if (spec.type == BPF_MAP_TYPE_HASH_OF_MAPS && spec.value_size != sizeof(std::uint32_t)) {
    return invalid(spec, "a HASH_OF_MAPS's value_size must be 4 (a descriptor), not " +
                             std::to_string(spec.value_size));
  }
  Expected<MapSpec> outer =
      spec.type == BPF_MAP_TYPE_ARRAY_OF_MAPS ? check_array(spec) : check_hash(spec);
  if (!outer) return outer;
  const MapSpec* inner = inner_map_template(spec);
  if (inner == nullptr) {
    return make_error(EBADF, "map '" + spec.name + "': a map-in-map needs an inner map template");
  }
  if (is_map_in_map(inner->type)) {
    return invalid(spec, "an inner map cannot be a map-in-map (one level only)");
  }
  Expected<MapSpec> inner_checked = check_map_create(*inner);
  if (!inner_checked) return inner_checked.error();
  return outer;
}

Expected<MapSpec> check_stack_trace(MapSpec spec) {
  if (spec.map_flags & ~kStackCreateFlagMask) {
    return invalid(spec, "unknown flags " + support::hex(spec.map_flags & ~kStackCreateFlagMask));
  }
  if (spec.max_entries == 0) return invalid(spec, "max_entries is 0");
  if (spec.key_size != sizeof(std::uint32_t)) {
    return invalid(spec, "a STACK_TRACE key_size must be 4, not " + std::to_string(spec.key_size));
  }
  if (spec.value_size < 8 || spec.value_size % 8 != 0) {
    return invalid(spec, "a STACK_TRACE value_size must be a non-zero multiple of 8, not " +
                             std::to_string(spec.value_size));
  }
  if (spec.map_flags & BPF_F_STACK_BUILD_ID) {
    // Build-id records need ELF build ids of user mappings, which this runtime does not read.
    if (spec.value_size % kStackBuildIdSize != 0 ||
        spec.value_size / kStackBuildIdSize > kPerfMaxStackDepth) {
      return invalid(spec, "BPF_F_STACK_BUILD_ID value_size must be a multiple of 32, at most " +
                               std::to_string(kPerfMaxStackDepth) + " records");
    }
    return make_error(EOPNOTSUPP,
                      "map '" + spec.name + "': BPF_F_STACK_BUILD_ID is not supported by userperf");
  }
  if (spec.value_size / 8 > kPerfMaxStackDepth) {
    return invalid(spec, "a STACK_TRACE value holds at most " + std::to_string(kPerfMaxStackDepth) +
                             " ips (perf_event_max_stack)");
  }
  if (spec.max_entries > kMaxHashBuckets) {
    return make_error(E2BIG, "map '" + spec.name + "': max_entries " +
                                 std::to_string(spec.max_entries) + " exceeds 2^31");
  }
  return spec;
}

// ringbuf_map_alloc: only BPF_F_NUMA_NODE; no key or value; the data size a power of two and
// a whole number of pages. (Its E2BIG bound, 2^24 pages less the meta pages, is beyond what a u32
// max_entries can reach.)
Expected<MapSpec> check_ringbuf(const MapSpec& spec) {
  if (spec.map_flags & ~std::uint32_t{BPF_F_NUMA_NODE}) {
    return invalid(spec, "unknown flags " + support::hex(spec.map_flags & ~BPF_F_NUMA_NODE));
  }
  if (spec.key_size != 0 || spec.value_size != 0) {
    return invalid(spec, "a RINGBUF has no key or value (key_size and value_size must be 0)");
  }
  const std::uint32_t size = spec.max_entries;
  const auto page = static_cast<std::uint32_t>(sysconf(_SC_PAGESIZE));
  if (size == 0 || (size & (size - 1)) != 0 || size % page != 0) {
    return invalid(spec,
                   "a RINGBUF's max_entries (its size) must be a power of 2 and a multiple "
                   "of the page size, not " +
                       std::to_string(size));
  }
  return spec;
}

Expected<MapSpec> check_global_data(const MapSpec& spec) {
  if (spec.type != BPF_MAP_TYPE_ARRAY || spec.max_entries != 1) {
    return invalid(spec, "global data must be a BPF_MAP_TYPE_ARRAY with one entry");
  }
  if (spec.initial_value.size() > spec.value_size) {
    return invalid(spec, "initial value of " + std::to_string(spec.initial_value.size()) +
                             " bytes exceeds value_size " + std::to_string(spec.value_size));
  }
  return check_array(spec);
}

}  // namespace

Expected<MapSpec> check_map_create(const MapSpec& spec) {
  // syscall.c: bpf_get_file_flag() refuses a descriptor that is both read-only and write-only.
  if ((spec.map_flags & BPF_F_RDONLY) && (spec.map_flags & BPF_F_WRONLY)) {
    return invalid(spec, "BPF_F_RDONLY and BPF_F_WRONLY together");
  }
  if (spec.global_data) return check_global_data(spec);
  if (!spec.initial_value.empty()) return invalid(spec, "an initial value is for global data only");
  switch (spec.type) {
    case BPF_MAP_TYPE_ARRAY:
    case BPF_MAP_TYPE_PERCPU_ARRAY:
    case BPF_MAP_TYPE_PROG_ARRAY:
    case BPF_MAP_TYPE_CGROUP_ARRAY:
      return check_array(spec);
    case BPF_MAP_TYPE_PERF_EVENT_ARRAY: {
      MapSpec fixed = spec;
      if (fixed.max_entries == 0) fixed.max_entries = possible_cpus();  // libbpf's fix-up
      return check_array(fixed);
    }
    case BPF_MAP_TYPE_HASH:
    case BPF_MAP_TYPE_PERCPU_HASH:
    case BPF_MAP_TYPE_LRU_HASH:
      return check_hash(spec);
    case BPF_MAP_TYPE_ARRAY_OF_MAPS:
    case BPF_MAP_TYPE_HASH_OF_MAPS:
      return check_map_in_map(spec);
    case BPF_MAP_TYPE_STACK_TRACE:
      return check_stack_trace(spec);
    case BPF_MAP_TYPE_RINGBUF:
      return check_ringbuf(spec);
    default:
      return invalid(spec, "map type " + std::to_string(spec.type) + " is not supported");
  }
}

}  // namespace userperf::bpf
