#include "bpf/loader/btf_funcs.hpp"

#include <bpf/btf.h>

#include <array>
#include <cerrno>
#include <limits>
#include <string>

namespace userperf::bpf::loader {
namespace {

// The kernel's btf_kind_str, by BTF kind: the words its messages name types with.
const char* kind_name(const btf_type* t) {
  static constexpr std::array<const char*, 20> kNames = {
      "UNKNOWN", "INT",     "PTR",      "ARRAY",    "STRUCT",   "UNION", "ENUM",
      "FWD",     "TYPEDEF", "VOLATILE", "CONST",    "RESTRICT", "FUNC",  "FUNC_PROTO",
      "VAR",     "DATASEC", "FLOAT",    "DECL_TAG", "TYPE_TAG", "ENUM64"};
  const std::uint16_t kind = btf_kind(t);
  return kind < kNames.size() ? kNames[kind] : "UNKNOWN";
}

// btf_type_skip_modifiers: typedefs and qualifiers down to the type they name. `id` follows.
const btf_type* skip_modifiers(const btf* b, std::uint32_t& id) {
  const btf_type* t = btf__type_by_id(b, id);
  while (t != nullptr && (btf_is_mod(t) || btf_is_typedef(t))) {
    id = t->type;
    t = btf__type_by_id(b, id);
  }
  return t;
}

// btf_get_prog_ctx_type: a pointer to a struct named as the program type's context.
bool points_to_ctx(const btf* b, const btf_type* ptr, std::uint32_t prog_type) {
  if (prog_type != BPF_PROG_TYPE_PERF_EVENT) return false;
  std::uint32_t id = ptr->type;
  const btf_type* t = skip_modifiers(b, id);
  if (t == nullptr || !(btf_is_struct(t) || btf_is_union(t))) return false;
  const char* name = btf__name_by_offset(b, t->name_off);
  return name != nullptr && std::string(name) == "bpf_perf_event_data";
}

BtfFuncArg describe_arg(const btf* b, std::uint32_t type_id, std::uint32_t prog_type) {
  BtfFuncArg arg;
  std::uint32_t id = type_id;
  const btf_type* t = skip_modifiers(b, id);
  if (t != nullptr && btf_is_ptr(t)) {
    if (points_to_ctx(b, t, prog_type)) {
      arg.kind = BtfFuncArg::Kind::kCtx;
      return arg;
    }
    std::uint32_t pointee_id = t->type;
    const btf_type* pointee = skip_modifiers(b, pointee_id);
    const std::int64_t size = btf__resolve_size(b, pointee_id);
    if (pointee == nullptr || size < 0 || size > std::numeric_limits<std::uint32_t>::max()) {
      arg.kind = BtfFuncArg::Kind::kUnsized;
      arg.size_error = size < 0 ? static_cast<std::int32_t>(size) : -E2BIG;
      arg.btf_kind = pointee != nullptr ? kind_name(pointee) : "UNKNOWN";
      const char* name = pointee != nullptr ? btf__name_by_offset(b, pointee->name_off) : "";
      arg.type_name = name != nullptr ? name : "";
      return arg;
    }
    arg.kind = BtfFuncArg::Kind::kMem;
    arg.mem_size = static_cast<std::uint32_t>(size);
    return arg;
  }
  if (t != nullptr && (btf_is_int(t) || btf_is_any_enum(t))) return arg;  // kScalar
  arg.kind = BtfFuncArg::Kind::kUnsupported;
  arg.btf_kind = t != nullptr ? kind_name(t) : "UNKNOWN";
  return arg;
}

}  // namespace

std::vector<BtfFunc> describe_btf_funcs(const BtfHandle& handle, const LinkedProgram& linked,
                                        std::uint32_t prog_type) {
  const btf* b = handle.get();
  std::vector<BtfFunc> funcs;
  for (const LinkedProgram::Function& function : linked.functions) {
    const std::int32_t func_id = btf__find_by_name_kind(b, function.name.c_str(), BTF_KIND_FUNC);
    if (func_id <= 0) continue;
    const btf_type* func = btf__type_by_id(b, static_cast<std::uint32_t>(func_id));
    const btf_type* proto = btf__type_by_id(b, func->type);
    if (proto == nullptr || !btf_is_func_proto(proto)) continue;
    BtfFunc described;
    described.start = function.start;
    described.name = function.name;
    described.global = btf_vlen(func) == BTF_FUNC_GLOBAL;
    std::uint32_t ret_id = proto->type;
    const btf_type* ret = skip_modifiers(b, ret_id);
    described.returns_scalar =
        ret_id != 0 && ret != nullptr && (btf_is_int(ret) || btf_is_any_enum(ret));
    const btf_param* params = btf_params(proto);
    for (std::uint16_t i = 0; i < btf_vlen(proto); ++i) {
      described.args.push_back(describe_arg(b, params[i].type, prog_type));
    }
    funcs.push_back(std::move(described));
  }
  return funcs;
}

}  // namespace userperf::bpf::loader
