// Applies CO-RE relocations (core_relocations.hpp) against a target BTF, normally the running
// kernel's (/sys/kernel/btf/vmlinux), as libbpf does at load: the local type named by each record
// is matched by name (a "___flavor" suffix ignored) with the target's types of the same kind, the
// access path is resolved member by member by name (through anonymous structs and unions), and the
// instruction's immediate or offset becomes the target's value.
//
// Applied kinds: field byte offset, byte size, existence, signedness and the bitfield shifts
// (lshift_u64/rshift_u64, little-endian), local and target (kernel) type ids, type existence,
// type size, enum value existence and enum value. type_matches is refused (EOPNOTSUPP) until it
// is applied and tested.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bpf/loader/core_relocations.hpp"
#include "support/expected.hpp"

struct btf;

namespace userperf::bpf::loader {

// A parsed BTF (libbpf's struct btf), owned.
class BtfHandle {
 public:
  // The running kernel's BTF (libbpf's btf__load_vmlinux_btf: /sys/kernel/btf/vmlinux).
  static Expected<std::shared_ptr<const BtfHandle>> kernel();
  // BTF from bytes (an object's .BTF, checked by check_btf before) or a raw BTF file.
  static Expected<std::shared_ptr<const BtfHandle>> from_bytes(std::span<const std::uint8_t> bytes);
  static Expected<std::shared_ptr<const BtfHandle>> from_file(const std::string& path);
  ~BtfHandle();
  const ::btf* get() const { return btf_; }
  // The ids, in order, of the types whose essential name (the name without a "___flavor"
  // suffix) is `name`. CO-RE matches each relocation's root type by name against the kernel's
  // ~127,000 types: the first call indexes every named type (37 ms for the kernel's, 1.7 MB),
  // where a scan per name took 11 ms (a CO-RE object names ten or more). None for "" (anonymous
  // types are nobody's candidates). Thread-safe.
  std::vector<std::uint32_t> types_named(std::string_view name) const;

 private:
  explicit BtfHandle(::btf* b) : btf_(b) {}
  void build_name_index() const;
  ::btf* btf_;
  // Every named type as (essential name, id), sorted by name, then id. The names point into the
  // BTF's string section, which lives as long as btf_.
  mutable std::once_flag name_index_once_;
  mutable std::vector<std::pair<std::string_view, std::uint32_t>> name_index_;
};

// A member of a named struct, reached through `path` (names, searched through anonymous members
// as CO-RE field relocations are): its byte offset from the struct and byte size. nullopt when
// the struct, a member or a size is missing, or the member is a bitfield.
struct BtfField {
  std::uint32_t offset = 0;
  std::uint32_t size = 0;
};
std::optional<BtfField> find_struct_field(const BtfHandle& btf, const std::string& struct_name,
                                          std::span<const std::string> path);
// sizeof(struct name), nullopt when the BTF has no such struct.
std::optional<std::uint32_t> struct_size(const BtfHandle& btf, const std::string& struct_name);

// Which relocation kinds this file applies.
bool core_relo_kind_applied(std::uint32_t kind);

// The value a relocation has in the local BTF (what clang put in the instruction) and in the
// target. A field, type or enumerator the target lacks is `found == false`: the existence kinds
// then relocate to 0, the others poison the instruction as libbpf does (`call 0xbad2310`, both
// halves of an lddw), so that a program reaching it is rejected by the verifier ("invalid func
// unknown#195896080") and one that guards it with bpf_core_field_exists loads.
inline constexpr std::int32_t kCorePoisonHelper = 195896080;  // 0xbad2310, "bad relo"

struct CoreValue {
  std::uint64_t local = 0;
  std::uint64_t target = 0;
  bool found = false;
  bool poison = false;
};

// EOPNOTSUPP: a kind not applied; E2BIG: a bitfield no 8-byte load holds; EINVAL: a record
// inconsistent with the local BTF, or target candidates that disagree (libbpf's "relocation
// decision ambiguity").
Expected<CoreValue> resolve_core_relocation(const BtfHandle& local, const BtfHandle& target,
                                            const CoreRelocation& relocation);

// Rewrites the instruction at relocation.insn_off of `code` (its section's bytes) from
// value.local to value.target: an ALU immediate, a load/store offset or an lddw's 64-bit
// immediate; or poisons it (value.poison). EINVAL when the instruction does not hold value.local
// (libbpf's check) or the new value does not fit.
std::optional<Error> patch_core_insn(std::vector<std::uint8_t>& code,
                                     const CoreRelocation& relocation, const CoreValue& value);

}  // namespace userperf::bpf::loader
