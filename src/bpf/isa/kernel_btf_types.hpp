// The kernel's struct types a program reaches through BTF-typed pointers (PTR_TO_BTF_ID:
// bpf_get_current_task_btf's task_struct, bpf_find_vma's vm_area_struct), as the verifier walks
// them (btf_struct_access). The loader reads them from the running kernel's BTF with libbpf
// (loader/kernel_btf_types.hpp) and the image carries them, as it carries KernelTaskLayout: the
// verifier links no BTF library.
//
// Only the types reachable from the roots within kMaxPointerHops pointer dereferences are
// described; a struct beyond is `opaque` (its name and size only): a load through a pointer to it
// is refused (the kernel would walk it). Typedefs, const, volatile and restrict are resolved away;
// a pointer keeps the type tag of its pointee (__user, __percpu, __rcu).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace userperf::bpf {

struct KernelBtfMember {
  std::string name;
  std::uint32_t type = 0;  // index in KernelBtfTypes::types
  std::uint32_t bit_offset = 0;
  std::uint32_t bitfield_size = 0;  // 0: not a bitfield
  bool operator==(const KernelBtfMember&) const = default;
};

struct KernelBtfType {
  enum class Kind : std::uint8_t { kVoid, kScalar, kPtr, kArray, kStruct, kUnion, kOther };
  enum class Tag : std::uint8_t { kNone, kUser, kPercpu, kRcu };
  Kind kind = Kind::kVoid;
  std::string name;
  std::uint32_t size = 0;    // scalars, structs, unions; arrays: the whole array
  std::uint32_t target = 0;  // kPtr: the pointee; kArray: the element (both modifiers resolved)
  std::uint32_t nelems = 0;  // kArray
  Tag tag = Tag::kNone;      // kPtr: the pointee's type tag
  bool opaque = false;       // kStruct/kUnion beyond the described depth: no members
  std::vector<KernelBtfMember> members;
  bool operator==(const KernelBtfType&) const = default;
};

struct KernelBtfTypes {
  static constexpr int kMaxPointerHops = 3;
  std::vector<KernelBtfType> types;  // [0] is void; empty: no kernel BTF read
  std::uint32_t task_struct = 0;     // the roots' indexes (0: absent)
  std::uint32_t vm_area_struct = 0;
  bool present() const { return task_struct != 0; }
  bool operator==(const KernelBtfTypes&) const = default;
};

}  // namespace userperf::bpf
