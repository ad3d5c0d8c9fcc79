#include "bpf/loader/core_apply.hpp"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/btf.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <utility>

#include "bpf/isa/insn.hpp"
#include "bpf/loader/untrusted_bytes.hpp"

namespace userperf::bpf::loader {
namespace {

// One step of an access path: a member (by name) or an array element.
struct AccessStep {
  bool is_array = false;
  std::uint32_t index = 0;  // array element
  std::string name;         // member
};

// A resolved field: the steps with names, the bit offset from the root pointer, the field's type.
struct FieldSpec {
  std::vector<AccessStep> steps;  // after the root's array step
  std::uint32_t root_index = 0;   // the first number of the access string: root[index]
  std::uint64_t bit_offset = 0;
  std::uint32_t field_type = 0;
  std::uint32_t bitfield_size = 0;  // bits, when the field is a bitfield member
};

std::string name_of(const ::btf* b, std::uint32_t name_off) {
  const char* name = btf__name_by_offset(b, name_off);
  return name == nullptr ? std::string() : std::string(name);
}

// A name without its "___flavor" suffix (libbpf's bpf_core_essential_name_len).
std::string_view essential(std::string_view name) {
  return name.substr(0, name.find("___"));
}

// Follows typedefs and modifiers (const, volatile, restrict, type tags) to the type they name.
std::uint32_t skip_mods_and_typedefs(const ::btf* b, std::uint32_t id) {
  for (int depth = 0; depth < 32; ++depth) {
    const btf_type* t = btf__type_by_id(b, id);
    if (t == nullptr || !(btf_is_mod(t) || btf_is_typedef(t))) return id;
    id = t->type;
  }
  return id;
}

Expected<std::vector<std::uint32_t>> parse_access(const std::string& access) {
  std::vector<std::uint32_t> out;
  const char* p = access.data();
  const char* end = p + access.size();
  while (p < end) {
    std::uint32_t value = 0;
    const auto [next, ec] = std::from_chars(p, end, value);
    if (ec != std::errc() || next == p) break;
    out.push_back(value);
    p = next;
    if (p == end) return out;
    if (*p != ':') break;
    ++p;
  }
  return make_error(EINVAL, "CO-RE access string '" + access + "' is malformed");
}

// The local field a record names: its path resolved by index in the object's BTF.
Expected<FieldSpec> local_field(const ::btf* b, const CoreRelocation& r) {
  auto indices = parse_access(r.access);
  if (!indices) return indices.error();
  FieldSpec spec;
  spec.root_index = indices->front();
  const __s64 root_size = btf__resolve_size(b, r.type_id);
  if (root_size < 0) return make_error(EINVAL, "CO-RE root type has no size");
  spec.bit_offset = std::uint64_t{spec.root_index} * static_cast<std::uint64_t>(root_size) * 8;
  std::uint32_t id = r.type_id;
  for (std::size_t i = 1; i < indices->size(); ++i) {
    const std::uint32_t index = (*indices)[i];
    id = skip_mods_and_typedefs(b, id);
    const btf_type* t = btf__type_by_id(b, id);
    if (t == nullptr) return make_error(EINVAL, "CO-RE access through an unknown type");
    if (btf_is_composite(t)) {
      if (index >= btf_vlen(t)) return make_error(EINVAL, "CO-RE member index out of range");
      spec.bitfield_size = btf_member_bitfield_size(t, index);
      spec.bit_offset += btf_member_bit_offset(t, index);
      const struct btf_member& m = btf_members(t)[index];
      std::string name = name_of(b, m.name_off);
      // An anonymous member is crossed on the way; the target is searched by the names alone.
      if (!name.empty()) spec.steps.push_back({false, 0, std::move(name)});
      id = m.type;
    } else if (btf_is_array(t)) {
      const struct btf_array* a = btf_array(t);
      const __s64 elem = btf__resolve_size(b, a->type);
      if (elem < 0) return make_error(EINVAL, "CO-RE array element has no size");
      spec.bit_offset += std::uint64_t{index} * static_cast<std::uint64_t>(elem) * 8;
      spec.bitfield_size = 0;
      spec.steps.push_back({true, index, {}});
      id = a->type;
    } else {
      return make_error(EINVAL, "CO-RE access into a type that is neither struct, union nor array");
    }
  }
  spec.field_type = id;
  return spec;
}

// Member `name` of composite `id`, searched through anonymous members as libbpf does: adds its
// bit offset to `bit_offset`, its bitfield size (0: none) to `bitfield_size`, and returns its
// type; nullopt when absent.
std::optional<std::uint32_t> find_member(const ::btf* b, std::uint32_t id, const std::string& name,
                                         std::uint64_t& bit_offset, std::uint32_t& bitfield_size,
                                         int depth = 0) {
  if (depth > 32) return std::nullopt;
  const btf_type* t = btf__type_by_id(b, skip_mods_and_typedefs(b, id));
  if (t == nullptr || !btf_is_composite(t)) return std::nullopt;
  for (std::uint32_t i = 0; i < btf_vlen(t); ++i) {
    const struct btf_member& m = btf_members(t)[i];
    const std::string member = name_of(b, m.name_off);
    if (member.empty()) {
      std::uint64_t inner = 0;
      if (auto found = find_member(b, m.type, name, inner, bitfield_size, depth + 1)) {
        bit_offset += btf_member_bit_offset(t, i) + inner;
        return found;
      }
    } else if (member == name) {
      bitfield_size = btf_member_bitfield_size(t, i);
      bit_offset += btf_member_bit_offset(t, i);
      return m.type;
    }
  }
  return std::nullopt;
}

// The local spec's path in target type `candidate`: nullopt when a member is missing.
std::optional<FieldSpec> target_field(const ::btf* b, std::uint32_t candidate,
                                      const FieldSpec& local) {
  FieldSpec spec;
  const __s64 root_size = btf__resolve_size(b, candidate);
  if (root_size < 0) return std::nullopt;
  spec.bit_offset = std::uint64_t{local.root_index} * static_cast<std::uint64_t>(root_size) * 8;
  std::uint32_t id = candidate;
  for (const AccessStep& step : local.steps) {
    id = skip_mods_and_typedefs(b, id);
    const btf_type* t = btf__type_by_id(b, id);
    if (t == nullptr) return std::nullopt;
    if (step.is_array) {
      if (!btf_is_array(t)) return std::nullopt;
      const struct btf_array* a = btf_array(t);
      const __s64 elem = btf__resolve_size(b, a->type);
      if (elem < 0) return std::nullopt;
      spec.bit_offset += std::uint64_t{step.index} * static_cast<std::uint64_t>(elem) * 8;
      spec.bitfield_size = 0;
      id = a->type;
    } else {
      auto member = find_member(b, id, step.name, spec.bit_offset, spec.bitfield_size);
      if (!member) return std::nullopt;
      id = *member;
    }
  }
  spec.field_type = id;
  return spec;
}

// Target types of the local root's kind whose essential name is the local one's.
std::vector<std::uint32_t> candidates(const ::btf* local, std::uint32_t local_id,
                                      const BtfHandle& target) {
  std::vector<std::uint32_t> out;
  const btf_type* lt = btf__type_by_id(local, local_id);
  if (lt == nullptr) return out;
  const std::string name = name_of(local, lt->name_off);
  const std::string_view wanted = essential(name);
  if (wanted.empty()) return out;
  for (const std::uint32_t id : target.types_named(wanted)) {
    const btf_type* t = btf__type_by_id(target.get(), id);
    const bool same_kind =
        btf_kind(t) == btf_kind(lt) || (btf_is_any_enum(t) && btf_is_any_enum(lt));
    if (same_kind) out.push_back(id);
  }
  return out;
}

// Enumerator `index` of local enum `id`: its name and value.
using Enumerator = std::pair<std::string, std::uint64_t>;

Expected<Enumerator> local_enumerator(const ::btf* b, std::uint32_t id, std::uint32_t index) {
  const btf_type* t = btf__type_by_id(b, skip_mods_and_typedefs(b, id));
  if (t == nullptr || !btf_is_any_enum(t) || index >= btf_vlen(t)) {
    return make_error(EINVAL, "CO-RE enum value relocation names no enumerator");
  }
  if (btf_is_enum64(t)) {
    const struct btf_enum64& e = btf_enum64(t)[index];
    return Enumerator{name_of(b, e.name_off), btf_enum64_value(&e)};
  }
  const struct btf_enum& e = btf_enum(t)[index];
  return Enumerator{name_of(b, e.name_off),
                    static_cast<std::uint64_t>(static_cast<std::int64_t>(e.val))};
}

std::optional<std::uint64_t> target_enumerator(const ::btf* b, std::uint32_t id,
                                               const std::string& name) {
  const btf_type* t = btf__type_by_id(b, id);
  for (std::uint32_t i = 0; i < btf_vlen(t); ++i) {
    if (btf_is_enum64(t)) {
      const struct btf_enum64& e = btf_enum64(t)[i];
      if (essential(name_of(b, e.name_off)) == essential(name)) return btf_enum64_value(&e);
    } else {
      const struct btf_enum& e = btf_enum(t)[i];
      if (essential(name_of(b, e.name_off)) == essential(name)) {
        return static_cast<std::uint64_t>(static_cast<std::int64_t>(e.val));
      }
    }
  }
  return std::nullopt;
}

// A field relocation's value in one BTF (the local one or a candidate's). The load unit of a
// bitfield is the smallest power-of-two size, from its type's size up to 8 bytes, aligned to
// itself, that holds all of it; the shifts then isolate it in a u64 read little-endian.
Expected<std::uint64_t> field_value(const ::btf* b, const FieldSpec& spec, std::uint32_t kind) {
  if (kind == BPF_CORE_FIELD_EXISTS) return std::uint64_t{1};
  const std::uint32_t resolved = skip_mods_and_typedefs(b, spec.field_type);
  const btf_type* type = btf__type_by_id(b, resolved);
  const __s64 type_size = btf__resolve_size(b, spec.field_type);
  // Size 0 is a flexible array member (struct pid's numbers[]): its offset is still a field's
  // offset, as libbpf computes it; only a bitfield needs a load unit.
  if (type == nullptr || type_size < 0) return make_error(EINVAL, "CO-RE field has no size");
  if (type_size == 0 && spec.bitfield_size != 0) {
    return make_error(EINVAL, "CO-RE bitfield of a type with no size");
  }
  std::uint64_t byte_size = static_cast<std::uint64_t>(type_size);
  std::uint64_t byte_offset = spec.bit_offset / 8;
  std::uint64_t bit_size = byte_size * 8;
  if (spec.bitfield_size != 0) {
    bit_size = spec.bitfield_size;
    byte_offset = spec.bit_offset / 8 / byte_size * byte_size;
    while (spec.bit_offset + bit_size - byte_offset * 8 > byte_size * 8) {
      if (byte_size >= 8) return make_error(E2BIG, "CO-RE bitfield spans more than 8 bytes");
      byte_size *= 2;
      byte_offset = spec.bit_offset / 8 / byte_size * byte_size;
    }
  } else if (spec.bit_offset % 8 != 0) {
    return make_error(EINVAL, "CO-RE field is not byte-aligned");
  }
  switch (kind) {
    case BPF_CORE_FIELD_BYTE_OFFSET:
      return byte_offset;
    case BPF_CORE_FIELD_BYTE_SIZE:
      return byte_size;
    case BPF_CORE_FIELD_SIGNED:
      return std::uint64_t{(btf_is_any_enum(type) && btf_kflag(type)) ||
                           (btf_is_int(type) && (btf_int_encoding(type) & BTF_INT_SIGNED) != 0)};
    case BPF_CORE_FIELD_LSHIFT_U64:  // little-endian (x86-64)
      return 64 - (spec.bit_offset + bit_size - byte_offset * 8);
    case BPF_CORE_FIELD_RSHIFT_U64:
      return 64 - bit_size;
    default:
      return make_error(EOPNOTSUPP, "not a field relocation");
  }
}

// Every candidate that matches must give the same value (libbpf's rule).
std::optional<Error> agree(CoreValue& value, std::uint64_t candidate_value) {
  if (value.found && value.target != candidate_value) {
    return make_error(EINVAL, "CO-RE relocation decision ambiguity: target candidates give " +
                                  std::to_string(value.target) + " and " +
                                  std::to_string(candidate_value));
  }
  value.found = true;
  value.target = candidate_value;
  return std::nullopt;
}

}  // namespace

Expected<std::shared_ptr<const BtfHandle>> BtfHandle::kernel() {
  ::btf* b = btf__load_vmlinux_btf();
  if (b == nullptr) {
    const int err = errno != 0 ? errno : ESRCH;
    return make_error(err, "cannot load the kernel's BTF (/sys/kernel/btf/vmlinux)");
  }
  return std::shared_ptr<const BtfHandle>(new BtfHandle(b));
}

Expected<std::shared_ptr<const BtfHandle>> BtfHandle::from_bytes(
    std::span<const std::uint8_t> bytes) {
  ::btf* b = btf__new(bytes.data(), static_cast<__u32>(bytes.size()));
  if (b == nullptr) return make_error(errno != 0 ? errno : EINVAL, "cannot parse BTF");
  return std::shared_ptr<const BtfHandle>(new BtfHandle(b));
}

Expected<std::shared_ptr<const BtfHandle>> BtfHandle::from_file(const std::string& path) {
  ::btf* b = btf__parse_raw(path.c_str());
  if (b == nullptr) return make_error(errno != 0 ? errno : EINVAL, "cannot parse BTF " + path);
  return std::shared_ptr<const BtfHandle>(new BtfHandle(b));
}

void BtfHandle::build_name_index() const {
  const std::uint32_t count = btf__type_cnt(btf_);
  name_index_.reserve(count);
  for (std::uint32_t id = 1; id < count; ++id) {
    const char* type_name = btf__name_by_offset(btf_, btf__type_by_id(btf_, id)->name_off);
    if (type_name == nullptr) continue;
    const std::string_view name = essential(type_name);
    if (!name.empty()) name_index_.emplace_back(name, id);
  }
  std::sort(name_index_.begin(), name_index_.end());
  name_index_.shrink_to_fit();
}

std::vector<std::uint32_t> BtfHandle::types_named(std::string_view name) const {
  if (name.empty()) return {};  // anonymous types are nobody's candidates
  std::call_once(name_index_once_, [this] { build_name_index(); });
  const auto first = std::lower_bound(name_index_.begin(), name_index_.end(),
                                      std::pair<std::string_view, std::uint32_t>{name, 0});
  std::vector<std::uint32_t> found;
  for (auto it = first; it != name_index_.end() && it->first == name; ++it)
    found.push_back(it->second);
  return found;
}

BtfHandle::~BtfHandle() {
  btf__free(btf_);
}

std::optional<std::uint32_t> struct_size(const BtfHandle& btf, const std::string& struct_name) {
  const ::btf* b = btf.get();
  const __s32 id = btf__find_by_name_kind(b, struct_name.c_str(), BTF_KIND_STRUCT);
  if (id <= 0) return std::nullopt;
  const __s64 size = btf__resolve_size(b, static_cast<std::uint32_t>(id));
  if (size < 0) return std::nullopt;
  return static_cast<std::uint32_t>(size);
}

std::optional<BtfField> find_struct_field(const BtfHandle& btf, const std::string& struct_name,
                                          std::span<const std::string> path) {
  const ::btf* b = btf.get();
  const __s32 root = btf__find_by_name_kind(b, struct_name.c_str(), BTF_KIND_STRUCT);
  if (root <= 0 || path.empty()) return std::nullopt;
  std::uint32_t id = static_cast<std::uint32_t>(root);
  std::uint64_t bit_offset = 0;
  for (const std::string& name : path) {
    std::uint32_t bitfield_size = 0;
    auto member = find_member(b, id, name, bit_offset, bitfield_size);
    if (!member || bitfield_size != 0) return std::nullopt;
    id = *member;
  }
  const __s64 size = btf__resolve_size(b, id);
  if (size < 0 || bit_offset % 8 != 0) return std::nullopt;
  return BtfField{static_cast<std::uint32_t>(bit_offset / 8), static_cast<std::uint32_t>(size)};
}

bool core_relo_kind_applied(std::uint32_t kind) {
  switch (kind) {
    case BPF_CORE_FIELD_BYTE_OFFSET:
    case BPF_CORE_FIELD_BYTE_SIZE:
    case BPF_CORE_FIELD_EXISTS:
    case BPF_CORE_FIELD_SIGNED:
    case BPF_CORE_FIELD_LSHIFT_U64:
    case BPF_CORE_FIELD_RSHIFT_U64:
    case BPF_CORE_TYPE_ID_LOCAL:
    case BPF_CORE_TYPE_ID_TARGET:
    case BPF_CORE_TYPE_EXISTS:
    case BPF_CORE_TYPE_SIZE:
    case BPF_CORE_ENUMVAL_EXISTS:
    case BPF_CORE_ENUMVAL_VALUE:
      return true;
    default:
      return false;
  }
}

Expected<CoreValue> resolve_core_relocation(const BtfHandle& local_btf, const BtfHandle& target_btf,
                                            const CoreRelocation& r) {
  const ::btf* local = local_btf.get();
  const ::btf* target = target_btf.get();
  if (!core_relo_kind_applied(r.kind)) {
    return make_error(EOPNOTSUPP, std::string("CO-RE relocation kind '") +
                                      core_relo_kind_name(r.kind) + "' is not applied");
  }
  if (btf__type_by_id(local, r.type_id) == nullptr || r.type_id == 0) {
    return make_error(EINVAL, "CO-RE relocation names local type " + std::to_string(r.type_id) +
                                  ", which the object's BTF lacks");
  }
  CoreValue value;
  const std::vector<std::uint32_t> found = candidates(local, r.type_id, target_btf);
  switch (r.kind) {
    case BPF_CORE_FIELD_BYTE_OFFSET:
    case BPF_CORE_FIELD_BYTE_SIZE:
    case BPF_CORE_FIELD_EXISTS:
    case BPF_CORE_FIELD_SIGNED:
    case BPF_CORE_FIELD_LSHIFT_U64:
    case BPF_CORE_FIELD_RSHIFT_U64: {
      auto spec = local_field(local, r);
      if (!spec) return spec.error();
      auto local_value = field_value(local, *spec, r.kind);
      if (!local_value) return local_value.error();
      value.local = *local_value;
      for (const std::uint32_t candidate : found) {
        auto field = target_field(target, candidate, *spec);
        if (!field) continue;
        auto v = field_value(target, *field, r.kind);
        if (!v) return v.error();
        if (auto error = agree(value, *v)) return *error;
      }
      if (!value.found) {
        value.target = 0;
        value.poison = r.kind != BPF_CORE_FIELD_EXISTS;
      }
      break;
    }
    case BPF_CORE_TYPE_ID_LOCAL:
      // The object's own type id: what clang wrote, whatever the kernel has.
      value.local = value.target = r.type_id;
      value.found = true;
      break;
    case BPF_CORE_TYPE_ID_TARGET:
      value.local = r.type_id;
      for (const std::uint32_t candidate : found) {
        if (auto error = agree(value, candidate)) return *error;
      }
      if (!value.found) value.poison = true;
      break;
    case BPF_CORE_TYPE_EXISTS:
    case BPF_CORE_TYPE_SIZE: {
      if (r.kind == BPF_CORE_TYPE_EXISTS) {
        value.local = 1;
      } else {
        const __s64 size = btf__resolve_size(local, r.type_id);
        if (size < 0) return make_error(EINVAL, "CO-RE type has no size");
        value.local = static_cast<std::uint64_t>(size);
      }
      for (const std::uint32_t candidate : found) {
        std::uint64_t v = 1;
        if (r.kind == BPF_CORE_TYPE_SIZE) {
          const __s64 size = btf__resolve_size(target, candidate);
          if (size < 0) continue;
          v = static_cast<std::uint64_t>(size);
        }
        if (auto error = agree(value, v)) return *error;
      }
      if (!value.found) {
        value.target = 0;
        value.poison = r.kind != BPF_CORE_TYPE_EXISTS;
      }
      break;
    }
    case BPF_CORE_ENUMVAL_EXISTS:
    case BPF_CORE_ENUMVAL_VALUE: {
      auto indices = parse_access(r.access);
      if (!indices) return indices.error();
      auto enumerator = local_enumerator(local, r.type_id, indices->front());
      if (!enumerator) return enumerator.error();
      value.local = r.kind == BPF_CORE_ENUMVAL_EXISTS ? 1 : enumerator->second;
      for (const std::uint32_t candidate : found) {
        auto v = target_enumerator(target, candidate, enumerator->first);
        if (!v) continue;
        if (auto error = agree(value, r.kind == BPF_CORE_ENUMVAL_EXISTS ? 1 : *v)) return *error;
      }
      if (!value.found) {
        value.target = 0;
        value.poison = r.kind != BPF_CORE_ENUMVAL_EXISTS;
      }
      break;
    }
    default:
      break;
  }
  return value;
}

std::optional<Error> patch_core_insn(std::vector<std::uint8_t>& code, const CoreRelocation& r,
                                     const CoreValue& value) {
  if (!fits(r.insn_off, sizeof(Insn), code.size())) {
    return make_error(EINVAL, "CO-RE relocation outside its section");
  }
  Insn insn = read_at<Insn>(code, r.insn_off);
  if (value.poison) {
    const bool wide = is_lddw(insn) && fits(r.insn_off, 2 * sizeof(Insn), code.size());
    Insn poison{};
    poison.code = BPF_JMP | BPF_CALL;
    poison.imm = kCorePoisonHelper;
    std::memcpy(code.data() + r.insn_off, &poison, sizeof poison);
    if (wide) std::memcpy(code.data() + r.insn_off + sizeof(Insn), &poison, sizeof poison);
    return std::nullopt;
  }
  const std::uint8_t cls = insn_class(insn.code);
  const auto mismatch = [&](std::int64_t held) {
    return make_error(EINVAL, "CO-RE relocation: the instruction holds " + std::to_string(held) +
                                  ", not the local value " + std::to_string(value.local));
  };
  if ((cls == BPF_ALU || cls == BPF_ALU64) && insn_source(insn.code) == BPF_K) {
    if (static_cast<std::uint32_t>(insn.imm) != static_cast<std::uint32_t>(value.local)) {
      return mismatch(insn.imm);
    }
    if (value.target > 0xffffffffull) return make_error(ERANGE, "CO-RE value does not fit imm");
    insn.imm = static_cast<std::int32_t>(value.target);
  } else if (cls == BPF_LDX || cls == BPF_ST || cls == BPF_STX) {
    if (static_cast<std::uint64_t>(static_cast<std::int64_t>(insn.off)) != value.local) {
      return mismatch(insn.off);
    }
    if (value.target > 0x7fff) return make_error(ERANGE, "CO-RE offset does not fit off");
    insn.off = static_cast<std::int16_t>(value.target);
  } else if (is_lddw(insn)) {
    if (!fits(r.insn_off, 2 * sizeof(Insn), code.size())) {
      return make_error(EINVAL, "CO-RE relocation of a truncated lddw");
    }
    Insn hi = read_at<Insn>(code, r.insn_off + sizeof(Insn));
    const std::uint64_t held = static_cast<std::uint32_t>(insn.imm) |
                               (std::uint64_t{static_cast<std::uint32_t>(hi.imm)} << 32);
    if (held != value.local) return mismatch(static_cast<std::int64_t>(held));
    insn.imm = static_cast<std::int32_t>(static_cast<std::uint32_t>(value.target));
    hi.imm = static_cast<std::int32_t>(static_cast<std::uint32_t>(value.target >> 32));
    std::memcpy(code.data() + r.insn_off + sizeof(Insn), &hi, sizeof hi);
  } else {
    return make_error(EINVAL, "CO-RE relocation on an instruction that takes no value");
  }
  std::memcpy(code.data() + r.insn_off, &insn, sizeof insn);
  return std::nullopt;
}

}  // namespace userperf::bpf::loader
