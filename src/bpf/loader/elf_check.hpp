// Structural checks of an ELF64 relocatable BPF object, done on the raw bytes before libelf or
// libbpf see them: both trust offsets and sizes that hostile input controls.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "support/expected.hpp"

namespace userperf::bpf::loader {

// Header (ELF64, little-endian like the host, ET_REL, EM_BPF), section headers inside the file,
// every section's data inside the file, names and string tables NUL-terminated, one symbol table
// whose symbols name valid sections and strings, REL sections with whole entries that point at
// the symbol table, executable sections a whole number of instructions.
std::optional<Error> check_elf_structure(std::span<const std::uint8_t> bytes);

}  // namespace userperf::bpf::loader
