// What libbpf's open (parse only, nothing reaches the kernel) says about an object: its entry
// programs with their section-derived types, and its BTF-defined maps. libbpf's log messages are
// captured into the returned Error instead of going to stderr.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bpf/isa/program_image.hpp"
#include "support/expected.hpp"

namespace userperf::bpf::loader {

struct LibbpfProgram {
  std::string name;
  std::string section;
  std::uint32_t prog_type = BPF_PROG_TYPE_UNSPEC;
};

struct LibbpfObject {
  std::vector<LibbpfProgram> programs;
  std::vector<MapSpec> btf_maps;  // libbpf's order (the .maps section's); internal maps left out
};

// `object_name` plays the role of the file name (libbpf derives the object's name from it).
Expected<LibbpfObject> open_with_libbpf(std::span<const std::uint8_t> checked_bytes,
                                        const std::string& object_name);

}  // namespace userperf::bpf::loader
