// map_create()'s checks on a MapSpec, per map type, in the kernel's order (syscall.c map_create,
// then the type's map_alloc_check and the size checks of its map_alloc). Returns the spec the map
// is built from: PERF_EVENT_ARRAY's max_entries 0 becomes possible_cpus() (libbpf does this before
// BPF_MAP_CREATE; the kernel itself rejects 0), and LRU_HASH with BPF_F_NO_COMMON_LRU gets
// max_entries rounded to a multiple of possible_cpus() as htab_map_alloc does.
#pragma once

#include <cstdint>

#include "bpf/isa/program_image.hpp"
#include "support/expected.hpp"

namespace userperf::bpf {

// Kernel limits the checks use (x86-64, 4 KiB pages).
inline constexpr std::uint64_t kKmallocMaxSize = 4u << 20;    // KMALLOC_MAX_SIZE
inline constexpr std::uint32_t kHtabElemSize = 48;            // sizeof(struct htab_elem)
inline constexpr std::uint32_t kPcpuMinUnitSize = 32u << 10;  // PCPU_MIN_UNIT_SIZE
inline constexpr std::uint32_t kPerfMaxStackDepth = 127;      // kernel.perf_event_max_stack default
inline constexpr std::uint32_t kStackBuildIdSize = 32;        // sizeof(struct bpf_stack_build_id)
inline constexpr std::uint32_t kMaxHashBuckets = 1u << 31;    // roundup_pow_of_two() limit

Expected<MapSpec> check_map_create(const MapSpec& spec);

constexpr std::uint32_t round_up_8(std::uint32_t size) {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(size) + 7) & ~std::uint64_t{7});
}

}  // namespace userperf::bpf
