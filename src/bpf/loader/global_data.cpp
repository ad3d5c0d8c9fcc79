#include "bpf/loader/global_data.hpp"

#include <elf.h>

#include <algorithm>
#include <cctype>

namespace userperf::bpf::loader {
namespace {

constexpr std::size_t kMapNameMax = BPF_OBJ_NAME_LEN - 1;  // the kernel keeps a NUL

bool has_prefix(const std::string& name, const std::string& prefix) {
  return name == prefix || name.rfind(prefix + ".", 0) == 0;
}

bool is_read_only(const std::string& section_name) {
  return has_prefix(section_name, ".rodata");
}

}  // namespace

bool is_global_data_section(const ElfSection& section) {
  if (section.type == SHT_NOBITS) return has_prefix(section.name, ".bss");
  if (section.type != SHT_PROGBITS || section.executable() || section.size == 0) return false;
  return has_prefix(section.name, ".data") || has_prefix(section.name, ".rodata");
}

std::string global_data_map_name(const std::string& object_name, const std::string& section_name) {
  const bool own_name = section_name.find('.', 1) != std::string::npos;
  const std::size_t room = kMapNameMax - std::max<std::size_t>(7, section_name.size());
  const std::size_t prefix =
      own_name || section_name.size() >= kMapNameMax ? 0 : std::min(room, object_name.size());
  std::string name = (object_name.substr(0, prefix) + section_name).substr(0, kMapNameMax);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') c = '_';
  }
  return name;
}

MapSpec global_data_map(const ElfSection& section, const std::string& object_name) {
  MapSpec spec;
  spec.name = global_data_map_name(object_name, section.name);
  spec.type = BPF_MAP_TYPE_ARRAY;
  spec.key_size = sizeof(std::uint32_t);
  spec.value_size = static_cast<std::uint32_t>(section.size);
  spec.max_entries = 1;
  spec.map_flags = is_read_only(section.name) ? BPF_F_RDONLY_PROG : 0;
  spec.global_data = true;
  spec.initial_value = section.bytes;
  spec.initial_value.resize(section.size, 0);  // .bss: zeros
  return spec;
}

}  // namespace userperf::bpf::loader
