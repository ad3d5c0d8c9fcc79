#include "bpf/loader/core_relocations.hpp"

#include <bpf/btf.h>
#include <linux/bpf.h>
#include <linux/btf.h>

#include <memory>

#include "bpf/loader/untrusted_bytes.hpp"

namespace userperf::bpf::loader {
namespace {

constexpr std::uint16_t kBtfMagic = 0xeB9F;
// struct btf_ext_header: magic, version, flags, hdr_len, func_info_off/len, line_info_off/len
// (24 bytes), then core_relo_off/len (32 bytes) when hdr_len covers them.
constexpr std::uint32_t kExtHeaderWithCore = 32;
constexpr std::uint32_t kCoreRecordMin = 16;  // struct bpf_core_relo
constexpr std::uint32_t kInsnSize = 8;

Error malformed(const std::string& what) {
  return make_error(EINVAL, "malformed .BTF.ext: " + what);
}

// The string at `offset` in .BTF's string table, or nullopt when outside it or unterminated.
std::optional<std::string> btf_string(const ElfView& elf, std::uint32_t offset) {
  const ElfSection* btf = elf.find(".BTF");
  if (btf == nullptr) return std::nullopt;
  const auto& bytes = btf->bytes;
  // struct btf_header: magic, version, flags, hdr_len, type_off, type_len, str_off, str_len.
  if (!fits(0, 24, bytes.size())) return std::nullopt;
  const auto hdr_len = read_at<std::uint32_t>(bytes, 4);
  const auto str_off = read_at<std::uint32_t>(bytes, 16);
  const auto str_len = read_at<std::uint32_t>(bytes, 20);
  const std::uint64_t start = std::uint64_t{hdr_len} + str_off;
  if (!fits(start, str_len, bytes.size()) || offset >= str_len) return std::nullopt;
  std::string out;
  for (std::uint64_t i = start + offset; i < start + str_len; ++i) {
    if (bytes[i] == 0) return out;
    out.push_back(static_cast<char>(bytes[i]));
  }
  return std::nullopt;
}

}  // namespace

const char* core_relo_kind_name(std::uint32_t kind) {
  switch (kind) {
    case BPF_CORE_FIELD_BYTE_OFFSET:
      return "byte_off";
    case BPF_CORE_FIELD_BYTE_SIZE:
      return "byte_sz";
    case BPF_CORE_FIELD_EXISTS:
      return "field_exists";
    case BPF_CORE_FIELD_SIGNED:
      return "signed";
    case BPF_CORE_FIELD_LSHIFT_U64:
      return "lshift_u64";
    case BPF_CORE_FIELD_RSHIFT_U64:
      return "rshift_u64";
    case BPF_CORE_TYPE_ID_LOCAL:
      return "local_type_id";
    case BPF_CORE_TYPE_ID_TARGET:
      return "target_type_id";
    case BPF_CORE_TYPE_EXISTS:
      return "type_exists";
    case BPF_CORE_TYPE_SIZE:
      return "type_size";
    case BPF_CORE_ENUMVAL_EXISTS:
      return "enumval_exists";
    case BPF_CORE_ENUMVAL_VALUE:
      return "enumval_value";
    case 12:
      return "type_matches";  // BPF_CORE_TYPE_MATCHES, newer than some uapi headers
    default:
      return "unknown";
  }
}

const char* core_relo_kind_description(std::uint32_t kind) {
  switch (kind) {
    case BPF_CORE_FIELD_BYTE_OFFSET:
      return "field byte offset";
    case BPF_CORE_FIELD_BYTE_SIZE:
      return "field byte size";
    case BPF_CORE_FIELD_EXISTS:
      return "field existence";
    case BPF_CORE_FIELD_SIGNED:
      return "field signedness";
    case BPF_CORE_FIELD_LSHIFT_U64:
      return "bitfield left shift";
    case BPF_CORE_FIELD_RSHIFT_U64:
      return "bitfield right shift";
    case BPF_CORE_TYPE_ID_LOCAL:
      return "local type id";
    case BPF_CORE_TYPE_ID_TARGET:
      return "target type id";
    case BPF_CORE_TYPE_EXISTS:
      return "type existence";
    case BPF_CORE_TYPE_SIZE:
      return "type size";
    case BPF_CORE_ENUMVAL_EXISTS:
      return "enum value existence";
    case BPF_CORE_ENUMVAL_VALUE:
      return "enum value";
    case 12:
      return "type match";
    default:
      return "unknown kind";
  }
}

Expected<std::vector<CoreRelocation>> read_core_relocations(const ElfView& elf) {
  std::vector<CoreRelocation> out;
  const ElfSection* ext = elf.find(".BTF.ext");
  if (ext == nullptr) return out;
  const auto& bytes = ext->bytes;
  if (!fits(0, 8, bytes.size())) return malformed("header truncated");
  if (read_at<std::uint16_t>(bytes, 0) != kBtfMagic) return malformed("bad magic");
  const auto hdr_len = read_at<std::uint32_t>(bytes, 4);
  if (hdr_len < kExtHeaderWithCore) return out;  // no CO-RE part
  if (!fits(0, kExtHeaderWithCore, bytes.size()) || hdr_len > bytes.size()) {
    return malformed("header truncated");
  }
  const auto core_off = read_at<std::uint32_t>(bytes, 24);
  const auto core_len = read_at<std::uint32_t>(bytes, 28);
  if (core_len == 0) return out;
  const std::uint64_t start = std::uint64_t{hdr_len} + core_off;
  if (!fits(start, core_len, bytes.size())) return malformed("CO-RE records outside the section");
  const std::uint64_t end = start + core_len;
  if (!fits(start, 4, end)) return malformed("CO-RE record size truncated");
  const auto record_size = read_at<std::uint32_t>(bytes, start);
  if (record_size < kCoreRecordMin) return malformed("CO-RE record size below 16 bytes");
  std::uint64_t at = start + 4;
  while (at < end) {
    if (!fits(at, 8, end)) return malformed("CO-RE section header truncated");
    const auto sec_name_off = read_at<std::uint32_t>(bytes, at);
    const auto count = read_at<std::uint32_t>(bytes, at + 4);
    at += 8;
    const auto section = btf_string(elf, sec_name_off);
    if (!section) return malformed("CO-RE section name outside .BTF's strings");
    const ElfSection* code = elf.find(*section);
    if (code == nullptr || !code->executable()) {
      return malformed("CO-RE records for '" + *section + "', which is no code section");
    }
    if (!fits(at, std::uint64_t{count} * record_size, end)) {
      return malformed("CO-RE records of '" + *section + "' truncated");
    }
    for (std::uint32_t i = 0; i < count; ++i, at += record_size) {
      CoreRelocation relo;
      relo.section = *section;
      relo.insn_off = read_at<std::uint32_t>(bytes, at);
      relo.type_id = read_at<std::uint32_t>(bytes, at + 4);
      const auto access = btf_string(elf, read_at<std::uint32_t>(bytes, at + 8));
      relo.kind = read_at<std::uint32_t>(bytes, at + 12);
      if (!access) return malformed("CO-RE access string outside .BTF's strings");
      relo.access = *access;
      if (relo.insn_off % kInsnSize != 0 || !fits(relo.insn_off, kInsnSize, code->bytes.size())) {
        return malformed("CO-RE record at byte " + std::to_string(relo.insn_off) + " of '" +
                         *section + "' is not on an instruction");
      }
      out.push_back(std::move(relo));
    }
  }
  return out;
}

std::string local_type_name(const ElfView& elf, std::uint32_t type_id) {
  const std::string fallback = "[" + std::to_string(type_id) + "]";
  const ElfSection* section = elf.find(".BTF");
  if (section == nullptr) return fallback;
  std::unique_ptr<btf, void (*)(btf*)> parsed(
      btf__new(section->bytes.data(), static_cast<__u32>(section->bytes.size())), btf__free);
  if (parsed == nullptr) return fallback;  // libbpf 1.x: NULL and errno on failure
  const btf_type* type = btf__type_by_id(parsed.get(), type_id);
  if (type == nullptr) return fallback;
  const char* name = btf__name_by_offset(parsed.get(), type->name_off);
  if (name == nullptr || *name == '\0') return fallback;
  switch (btf_kind(type)) {
    case BTF_KIND_STRUCT:
      return std::string("struct ") + name;
    case BTF_KIND_UNION:
      return std::string("union ") + name;
    case BTF_KIND_ENUM:
    case BTF_KIND_ENUM64:
      return std::string("enum ") + name;
    default:
      return name;
  }
}

}  // namespace userperf::bpf::loader
