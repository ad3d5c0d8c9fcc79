// The CO-RE relocation records of an object's .BTF.ext (clang's output for
// __builtin_preserve_access_index, BPF_CORE_READ, bpf_core_field_exists, bpf_core_type_size, ...):
// read from bytes nobody vouched for, every offset and count checked. libbpf applies them at load
// against the kernel's BTF, and so does the loader (core_apply.hpp), which refuses an object with
// a kind it does not apply rather than run clang's placeholder values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bpf/loader/elf_view.hpp"
#include "support/expected.hpp"

namespace userperf::bpf::loader {

struct CoreRelocation {
  std::string section;         // the code section the instruction is in
  std::uint32_t insn_off = 0;  // byte offset of the instruction in that section
  std::uint32_t type_id = 0;   // the local (object's) BTF type the access starts from
  std::string access;          // "0:1:2": the access path of member / element indices
  std::uint32_t kind = 0;      // enum bpf_core_relo_kind
};

// libbpf's short name of a relocation kind ("byte_off", "type_size", ...) and a description
// ("field byte offset"); "unknown" for a kind libbpf does not know.
const char* core_relo_kind_name(std::uint32_t kind);
const char* core_relo_kind_description(std::uint32_t kind);

// Every CO-RE relocation of the object (none without .BTF.ext or without its CO-RE part); EINVAL
// for a malformed .BTF.ext (ranges outside the section, record sizes below 16 bytes, strings not
// in .BTF's string table, instruction offsets not on an instruction).
Expected<std::vector<CoreRelocation>> read_core_relocations(const ElfView& elf);

// "struct task_struct" for a local BTF type id (through the .BTF section, checked before),
// "[ID]" when it has no name.
std::string local_type_name(const ElfView& elf, std::uint32_t type_id);

}  // namespace userperf::bpf::loader
