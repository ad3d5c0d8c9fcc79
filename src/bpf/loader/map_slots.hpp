// libbpf's static initialisation of map slots: `.values = { [i] = &prog }` in a PROG_ARRAY's
// definition, `{ [i] = &inner }` in a map-in-map's, leaves relocations in `.maps`
// (bpf_object__collect_map_relos), which name the programs or maps to store once the object is
// loaded (bpf_object__init_prog_arrays, init_map_in_map_slots). The slots are read into
// MapSpec::initial_slots; the runtime's registry stores them at load.
#pragma once

#include <optional>

#include "bpf/isa/program_image.hpp"
#include "bpf/loader/elf_view.hpp"
#include "bpf/loader/libbpf_view.hpp"
#include "support/expected.hpp"

namespace userperf::bpf::loader {

// Fills image.maps[*].initial_slots from the .maps relocations (none: nothing to do). Errors
// as libbpf's: a slot past max_entries, naming no program (PROG_ARRAY) or no map (map-in-map) of
// the object is EINVAL.
std::optional<Error> collect_map_slots(const ElfView& elf, const LibbpfObject& parsed,
                                       ObjectImage& image);

}  // namespace userperf::bpf::loader
