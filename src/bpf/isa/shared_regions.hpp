// Memory every program run may reach besides its own regions: the value storage of maps stored in
// map-in-map slots. An inner map may belong to another object than the program that looks it up,
// so its values are in none of the program's static regions; the interpreter's access checks and
// the helpers' pointer checks consult this table too. Append-only (an inner map is kept until the
// registry goes, as the kernel keeps it past an RCU grace period); readers are lock-free.
#pragma once

#include <span>

#include "bpf/isa/memory_region.hpp"

namespace userperf::bpf {

// Adds `region` (nothing for an empty one or one already there). False: the table is full.
bool add_shared_region(const MemoryRegion& region);
// SIGNAL-SAFE: the regions added so far.
std::span<const MemoryRegion> shared_regions();

}  // namespace userperf::bpf
