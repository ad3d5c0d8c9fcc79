#include "bpf/loader/btf_check.hpp"

#include <linux/btf.h>

#include <string>
#include <vector>

#include "bpf/loader/untrusted_bytes.hpp"

namespace userperf::bpf::loader {
namespace {

std::optional<Error> malformed(const std::string& what) {
  return make_error(EINVAL, "malformed .BTF: " + what);
}

// The bytes of the records that follow a btf_type of this kind; false for an unknown kind.
bool trailing_size(std::uint32_t kind, std::uint32_t vlen, std::uint64_t& size) {
  switch (kind) {
    case BTF_KIND_PTR:
    case BTF_KIND_FWD:
    case BTF_KIND_TYPEDEF:
    case BTF_KIND_VOLATILE:
    case BTF_KIND_CONST:
    case BTF_KIND_RESTRICT:
    case BTF_KIND_FUNC:
    case BTF_KIND_FLOAT:
    case BTF_KIND_TYPE_TAG:
      size = 0;
      return true;
    case BTF_KIND_INT:
    case BTF_KIND_VAR:
    case BTF_KIND_DECL_TAG:
      size = 4;
      return true;
    case BTF_KIND_ARRAY:
      size = sizeof(btf_array);
      return true;
    case BTF_KIND_STRUCT:
    case BTF_KIND_UNION:
      size = std::uint64_t{vlen} * sizeof(btf_member);
      return true;
    case BTF_KIND_ENUM:
      size = std::uint64_t{vlen} * sizeof(btf_enum);
      return true;
    case BTF_KIND_FUNC_PROTO:
      size = std::uint64_t{vlen} * sizeof(btf_param);
      return true;
    case BTF_KIND_DATASEC:
      size = std::uint64_t{vlen} * sizeof(btf_var_secinfo);
      return true;
    case BTF_KIND_ENUM64:
      size = std::uint64_t{vlen} * 12;
      return true;  // btf_enum64
    default:
      return false;
  }
}

// Kinds whose `type` field names another type that libbpf follows to resolve a type.
bool follows_type(std::uint32_t kind) {
  return kind == BTF_KIND_PTR || kind == BTF_KIND_TYPEDEF || kind == BTF_KIND_VOLATILE ||
         kind == BTF_KIND_CONST || kind == BTF_KIND_RESTRICT || kind == BTF_KIND_TYPE_TAG ||
         kind == BTF_KIND_VAR || kind == BTF_KIND_FUNC || kind == BTF_KIND_DECL_TAG;
}

struct TypeAt {
  btf_type type;
  std::uint64_t offset;  // of the btf_type in the type area
};

class BtfChecker {
 public:
  BtfChecker(std::span<const std::uint8_t> types, std::uint32_t str_len)
      : types_(types), str_len_(str_len) {}

  std::optional<Error> run() {
    if (auto error = index_types()) return error;
    for (std::size_t i = 1; i < all_.size(); ++i) {
      if (auto error = check_type(static_cast<std::uint32_t>(i))) return error;
    }
    return check_chains();
  }

 private:
  std::optional<Error> index_types() {
    all_.push_back({});  // id 0: void
    for (std::uint64_t off = 0; off < types_.size();) {
      if (!fits(off, sizeof(btf_type), types_.size())) return malformed("truncated type");
      const auto type = read_at<btf_type>(types_, off);
      std::uint64_t extra = 0;
      if (!trailing_size(BTF_INFO_KIND(type.info), BTF_INFO_VLEN(type.info), extra)) {
        return malformed("type " + std::to_string(all_.size()) + " has an unknown kind");
      }
      if (!fits(off + sizeof(btf_type), extra, types_.size())) {
        return malformed("type " + std::to_string(all_.size()) + " is truncated");
      }
      all_.push_back({type, off});
      off += sizeof(btf_type) + extra;
    }
    return std::nullopt;
  }

  bool valid_name(std::uint32_t off) const { return off < str_len_; }
  bool valid_id(std::uint32_t id) const { return id < all_.size(); }

  std::optional<Error> check_type(std::uint32_t id) {
    const btf_type& t = all_[id].type;
    const std::uint32_t kind = BTF_INFO_KIND(t.info);
    const std::uint32_t vlen = BTF_INFO_VLEN(t.info);
    const std::uint64_t records = all_[id].offset + sizeof(btf_type);
    const std::string where = "type " + std::to_string(id);
    if (!valid_name(t.name_off)) return malformed(where + ": name outside the strings");
    if (follows_type(kind) && !valid_id(t.type)) {
      return malformed(where + ": refers to an undefined type");
    }
    switch (kind) {
      case BTF_KIND_ARRAY: {
        const auto array = read_at<btf_array>(types_, records);
        if (!valid_id(array.type) || !valid_id(array.index_type)) {
          return malformed(where + ": array of an undefined type");
        }
        break;
      }
      case BTF_KIND_STRUCT:
      case BTF_KIND_UNION:
        for (std::uint32_t i = 0; i < vlen; ++i) {
          const auto m = read_at<btf_member>(types_, records + i * sizeof(btf_member));
          if (!valid_name(m.name_off) || !valid_id(m.type)) {
            return malformed(where + ": bad member " + std::to_string(i));
          }
        }
        break;
      case BTF_KIND_ENUM:
        for (std::uint32_t i = 0; i < vlen; ++i) {
          const auto e = read_at<btf_enum>(types_, records + i * sizeof(btf_enum));
          if (!valid_name(e.name_off)) return malformed(where + ": bad enumerator name");
        }
        break;
      case BTF_KIND_ENUM64:
        for (std::uint32_t i = 0; i < vlen; ++i) {
          if (!valid_name(read_at<std::uint32_t>(types_, records + i * 12))) {
            return malformed(where + ": bad enumerator name");
          }
        }
        break;
      case BTF_KIND_FUNC_PROTO:
        if (!valid_id(t.type)) return malformed(where + ": undefined return type");
        for (std::uint32_t i = 0; i < vlen; ++i) {
          const auto p = read_at<btf_param>(types_, records + i * sizeof(btf_param));
          if (!valid_name(p.name_off) || !valid_id(p.type)) {
            return malformed(where + ": bad parameter " + std::to_string(i));
          }
        }
        break;
      case BTF_KIND_DATASEC:
        for (std::uint32_t i = 0; i < vlen; ++i) {
          const auto v = read_at<btf_var_secinfo>(types_, records + i * sizeof(btf_var_secinfo));
          if (v.type == 0 || !valid_id(v.type)) return malformed(where + ": undefined variable");
          const std::uint32_t var_kind = BTF_INFO_KIND(all_[v.type].type.info);
          if (var_kind != BTF_KIND_VAR && var_kind != BTF_KIND_FUNC) {
            return malformed(where + ": section entry " + std::to_string(i) + " is not a VAR");
          }
        }
        break;
      default:
        break;
    }
    return std::nullopt;
  }

  // Following `type` through modifiers, typedefs, pointers, vars and funcs must reach a type
  // that ends the chain within as many steps as there are types.
  std::optional<Error> check_chains() const {
    for (std::size_t start = 1; start < all_.size(); ++start) {
      std::uint32_t id = static_cast<std::uint32_t>(start);
      std::size_t steps = 0;
      while (id != 0 && follows_type(BTF_INFO_KIND(all_[id].type.info))) {
        id = all_[id].type.type;
        if (++steps > all_.size()) {
          return malformed("type " + std::to_string(start) + " is part of a reference loop");
        }
      }
    }
    return std::nullopt;
  }

  std::span<const std::uint8_t> types_;
  std::uint32_t str_len_;
  std::vector<TypeAt> all_;
};

}  // namespace

std::optional<Error> check_btf(std::span<const std::uint8_t> section) {
  if (section.size() < sizeof(btf_header)) return malformed("truncated header");
  const auto hdr = read_at<btf_header>(section, 0);
  if (hdr.magic != BTF_MAGIC) return malformed("bad magic (or other byte order)");
  if (hdr.version != BTF_VERSION) return malformed("unknown version");
  if (hdr.hdr_len < sizeof(btf_header) || hdr.hdr_len > section.size()) {
    return malformed("bad header length");
  }
  const std::span<const std::uint8_t> data = section.subspan(hdr.hdr_len);
  if (!fits(hdr.type_off, hdr.type_len, data.size()) || hdr.type_off % 4 != 0 ||
      !fits(hdr.str_off, hdr.str_len, data.size())) {
    return malformed("type or string area outside the section");
  }
  const std::span<const std::uint8_t> strings = data.subspan(hdr.str_off, hdr.str_len);
  if (strings.empty() || strings.front() != 0 || strings.back() != 0) {
    return malformed("string area is not NUL-delimited");
  }
  return BtfChecker(data.subspan(hdr.type_off, hdr.type_len), hdr.str_len).run();
}

}  // namespace userperf::bpf::loader
