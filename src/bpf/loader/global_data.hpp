// Global variables: each .data*, .rodata* and .bss* section becomes an internal ARRAY map with one
// entry holding the whole section (libbpf's model), so programs address them as map values.
#pragma once

#include <string>

#include "bpf/isa/program_image.hpp"
#include "bpf/loader/elf_view.hpp"

namespace userperf::bpf::loader {

// .data, .data.*, .rodata, .rodata.* (non-empty PROGBITS, not executable) and .bss, .bss.*
// (NOBITS).
bool is_global_data_section(const ElfSection& section);

// libbpf's naming, so the kernel and tools show the same names: "<object>.<section>" with the
// object's name (the file name up to its first '.') cut to leave room for a section name of at
// least 7 characters in the kernel's 15; sections with a second '.' (".rodata.str1.1",
// ".data.custom") keep their own name, cut to 15. Characters the kernel refuses become '_'.
std::string global_data_map_name(const std::string& object_name, const std::string& section_name);

// ARRAY, key 4, value = the section, one entry; .rodata* read-only for programs and frozen.
MapSpec global_data_map(const ElfSection& section, const std::string& object_name);

}  // namespace userperf::bpf::loader
