// libbpf's static initialisation of map slots: `.values = { [i] = &prog }` in a PROG_ARRAY's
// definition leaves relocations in `.maps` (bpf_object__collect_map_relos), which name the
// programs to store once the object is loaded (bpf_object__init_prog_arrays). The slots are read
// into MapSpec::initial_programs; the runtime's registry stores them at load.
#pragma once

#include <optional>

#include "bpf/isa/program_image.hpp"
#include "bpf/loader/elf_view.hpp"
#include "bpf/loader/libbpf_view.hpp"
#include "support/expected.hpp"

namespace userperf::bpf::loader {

// Fills image.maps[*].initial_programs from the .maps relocations (none: nothing to do). Errors
// as libbpf's: a slot past max_entries or naming no program of the object is EINVAL; slots of a
// map-in-map (a map's address in `.values`) are EOPNOTSUPP, as userperf has no map-in-map.
std::optional<Error> collect_map_slots(const ElfView& elf, const LibbpfObject& parsed,
                                       ObjectImage& image);

}  // namespace userperf::bpf::loader
