// What a loader produces and the verifier and runtime consume: programs as instruction vectors
// whose map references are still symbolic, and the specs of the maps they use.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bpf/isa/insn.hpp"
#include "bpf/isa/kernel_btf_types.hpp"
#include "bpf/isa/kernel_task_layout.hpp"

namespace userperf::bpf {

struct MapSpec {
  std::string name;
  std::uint32_t type = BPF_MAP_TYPE_UNSPEC;  // enum bpf_map_type
  std::uint32_t key_size = 0;
  std::uint32_t value_size = 0;
  std::uint32_t max_entries = 0;  // a PERF_EVENT_ARRAY's 0 means "one per possible CPU" (libbpf)
  std::uint32_t map_flags = 0;    // BPF_F_NO_PREALLOC, BPF_F_RDONLY_PROG, ...
  // Global data (.data, .rodata, .bss): an ARRAY with one entry whose initial value is the
  // section's bytes (empty for .bss: zeros). .rodata is frozen: map_flags has BPF_F_RDONLY_PROG.
  bool global_data = false;
  std::vector<std::uint8_t> initial_value;
  // Slots initialised in the object (libbpf: `.values = { [i] = &prog }` or `{ [i] = &map }`):
  // what to store in them once loaded, as bpf_object__load does. A PROG_ARRAY's slots name
  // programs of the same object, a map-in-map's slots name maps of the same object.
  struct Slot {
    std::uint32_t index = 0;
    std::string name;  // the program's or the map's
    bool operator==(const Slot&) const = default;
  };
  std::vector<Slot> initial_slots;
  // ARRAY_OF_MAPS / HASH_OF_MAPS: the inner map's template (one element; libbpf reads it from
  // the BTF of `__array(values, struct inner)`, the kernel takes it from inner_map_fd). What the
  // verifier knows of a looked-up inner map, and what a stored map must match (map_in_map.c).
  std::vector<MapSpec> inner_map;
};

// One argument of a function as its BTF prototype describes it to the verifier (the kernel's
// btf_prepare_func_args, for perf_event programs, without argument tags).
struct BtfFuncArg {
  enum class Kind : std::uint8_t {
    kScalar,       // an int or an enum
    kCtx,          // a pointer to the program type's context (struct bpf_perf_event_data)
    kMem,          // a pointer to a type of mem_size bytes: PTR_TO_MEM, maybe NULL
    kUnsized,      // a pointer to a type whose size BTF does not give (void, a function...)
    kUnsupported,  // anything else (a struct passed by value, a float...)
  };
  Kind kind = Kind::kScalar;
  std::uint32_t mem_size = 0;   // kMem
  std::int32_t size_error = 0;  // kUnsized: the (negative) errno of resolving the pointee's size
  std::string btf_kind;         // kUnsized: the pointee's BTF kind ("UNKNOWN", "FWD"...);
                                // kUnsupported: the argument's ("STRUCT", "FLOAT"...)
  std::string type_name;        // kUnsized: the pointee's name ("" for void)
  bool operator==(const BtfFuncArg&) const = default;
};

// A function of a program with BTF function info (its FUNC and FUNC_PROTO types).
struct BtfFunc {
  std::uint32_t start = 0;  // its first instruction in ProgramImage::insns
  std::string name;
  bool global = false;          // BTF_FUNC_GLOBAL linkage (a non-static C function)
  bool returns_scalar = false;  // returns an int or an enum (void does not count)
  std::vector<BtfFuncArg> args;
  bool operator==(const BtfFunc&) const = default;
};

// The template of an outer map (nullptr for any other map).
inline const MapSpec* inner_map_template(const MapSpec& spec) {
  return spec.inner_map.empty() ? nullptr : &spec.inner_map.front();
}

inline bool is_map_in_map(std::uint32_t type) {
  return type == BPF_MAP_TYPE_ARRAY_OF_MAPS || type == BPF_MAP_TYPE_HASH_OF_MAPS;
}

// libbpf's bpf_map__set_inner_map_fd, with the inner map's shape (userperf has no map of its own
// outside an object): replaces `outer`'s template. False when `outer` is no map-in-map.
inline bool set_inner_map_template(MapSpec& outer, MapSpec inner) {
  if (!is_map_in_map(outer.type)) return false;
  if (inner.name.empty()) inner.name = outer.name + ".inner";
  outer.inner_map.assign(1, std::move(inner));
  return true;
}

struct ProgramImage {
  std::string name;     // the program's symbol
  std::string section;  // e.g. "perf_event"
  std::uint32_t prog_type = BPF_PROG_TYPE_UNSPEC;
  // The main function first, then every subprogram it calls (BPF_PSEUDO_CALL imm relative, as
  // the kernel expects). Map references are lddw pairs with src_reg BPF_PSEUDO_MAP_IDX (imm = index
  // into the maps vector) or BPF_PSEUDO_MAP_IDX_VALUE (imm = index, second imm = byte offset).
  std::vector<Insn> insns;
  // The object carries BTF function info (.BTF and .BTF.ext, as clang -g emits and libbpf passes
  // to BPF_PROG_LOAD): the kernel allows tail calls in subprograms only then.
  bool btf_func_info = false;
  // With BTF function info: each function of `insns` that has a BTF FUNC type, by start. The
  // verifier verifies global ones on their own, from the prototype, as the kernel does.
  std::vector<BtfFunc> btf_funcs;
};

struct ObjectImage {
  std::string license;  // the "license" section, "" when absent
  std::uint32_t kern_version = 0;
  std::vector<MapSpec> maps;
  std::vector<ProgramImage> programs;
  // The running kernel's task_struct layout, read by the loader when a program calls
  // bpf_get_current_task (its synthetic task is laid out as the kernel's).
  KernelTaskLayout task_layout;
  // The kernel's struct types, read by the loader when a program calls bpf_get_current_task_btf
  // or bpf_find_vma: what the verifier types loads through their BTF pointers with. Null
  // otherwise. Read once per process and shared by every object (thousands of types).
  std::shared_ptr<const KernelBtfTypes> kernel_btf;
};

// True when the program calls kernel helper `id` (a BPF_CALL with src_reg 0) anywhere.
bool program_calls_helper(const ProgramImage& program, std::int32_t id);

// GPL-compatible licence strings, as the kernel's license_is_gpl_compatible().
bool license_is_gpl_compatible(const std::string& license);

}  // namespace userperf::bpf
