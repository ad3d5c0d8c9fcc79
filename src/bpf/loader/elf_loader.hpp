// Loads `clang -O2 -target bpf` objects written for libbpf: programs by section (SEC("perf_event")
// -> BPF_PROG_TYPE_PERF_EVENT), BTF-defined maps in .maps, global data (.rodata, .data, .bss) as
// internal array maps, subprograms in .text, the license and version sections. libbpf parses the
// object and its BTF; the relocations are read with libelf and applied here.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "bpf/isa/program_image.hpp"
#include "support/expected.hpp"

namespace userperf::bpf {

Expected<ObjectImage> load_elf_file(const std::string& path);
// `name` is used in error messages.
Expected<ObjectImage> load_elf_memory(std::span<const std::uint8_t> bytes, const std::string& name);

}  // namespace userperf::bpf
