#include "pmu/tracepoint/tracepoint_descriptor.hpp"

#include <cerrno>
#include <cstring>

namespace userperf::pmu {

namespace {

Expected<void> identifier_check(const char* s, const char* what) {
  if (s == nullptr || s[0] == '\0') {
    return make_error(EINVAL, std::string(what) + " is empty");
  }
  const std::size_t len = std::strlen(s);
  if (len > USERPERF_TP_MAX_NAME) {
    return make_error(EINVAL, std::string(what) + " \"" + std::string(s, 16) + "...\" is " +
                                  std::to_string(len) + " characters long, at most " +
                                  std::to_string(USERPERF_TP_MAX_NAME));
  }
  for (std::size_t i = 0; i < len; ++i) {
    const char c = s[i];
    const bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) {
      return make_error(EINVAL, std::string(what) + " \"" + s + "\" is not a C identifier");
    }
  }
  return {};
}

FieldLayout field_layout(std::uint32_t kind) {
  switch (kind) {
    case USERPERF_TP_STRING:
    case USERPERF_TP_BYTES:
      return {0, 4, false, true};
    default: {
      const bool is_signed = kind >= USERPERF_TP_S8;
      const std::uint32_t log2 = (kind - (is_signed ? USERPERF_TP_S8 : USERPERF_TP_U8));
      return {0, 1u << log2, is_signed, false};
    }
  }
}

const char* type_name(std::uint32_t kind) {
  static constexpr const char* kNames[] = {"",   "u8",  "u16", "u32", "u64",
                                           "s8", "s16", "s32", "s64"};
  return kind <= USERPERF_TP_S64 ? kNames[kind] : "";
}

// printf conversions libtraceevent applies to a field read as an unsigned number: the length
// modifiers make it narrow the value (and sign-extend for signed fields) first.
const char* conversion(std::uint32_t kind) {
  static constexpr const char* kConversions[] = {"",     "%hhu", "%hu", "%u",  "%llu",
                                                 "%hhd", "%hd",  "%d",  "%lld"};
  return kind <= USERPERF_TP_S64 ? kConversions[kind] : "%s";
}

}  // namespace

Layout layout_of(const userperf_tracepoint& tp) {
  Layout layout;
  std::uint32_t offset = kCommonSize;
  std::uint32_t align = 4;  // common_pid
  for (std::uint32_t i = 0; i < tp.nr_fields; ++i) {
    FieldLayout f = field_layout(tp.fields[i].kind);
    offset = (offset + f.size - 1) / f.size * f.size;
    f.offset = offset;
    offset += f.size;
    if (f.size > align) align = f.size;
    layout.fields[i] = f;
  }
  layout.fixed_size = (offset + align - 1) / align * align;
  std::uint32_t covered = kCommonSize;
  for (std::uint32_t i = 0; i < tp.nr_fields; ++i) covered += layout.fields[i].size;
  layout.padded = covered != layout.fixed_size;
  return layout;
}

std::string full_name(const userperf_tracepoint& tp) {
  return std::string(tp.provider) + ":" + tp.name;
}

Expected<void> tracepoint_check(const userperf_tracepoint& tp) {
  if (tp.abi_version != USERPERF_TP_ABI_VERSION) {
    return make_error(EINVAL, "descriptor ABI version " + std::to_string(tp.abi_version) +
                                  ", this library knows " +
                                  std::to_string(USERPERF_TP_ABI_VERSION));
  }
  if (Expected<void> ok = identifier_check(tp.provider, "provider"); !ok) return ok;
  if (Expected<void> ok = identifier_check(tp.name, "name"); !ok) return ok;
  const std::string name = full_name(tp);
  if (tp.nr_fields > USERPERF_TP_MAX_FIELDS) {
    return make_error(EINVAL, name + ": " + std::to_string(tp.nr_fields) + " fields, at most " +
                                  std::to_string(USERPERF_TP_MAX_FIELDS));
  }
  if (tp.nr_fields > 0 && tp.fields == nullptr) {
    return make_error(EINVAL, name + ": no field array");
  }
  for (std::uint32_t i = 0; i < tp.nr_fields; ++i) {
    if (Expected<void> ok = identifier_check(tp.fields[i].name, "field name"); !ok) {
      return make_error(EINVAL, name + ": " + ok.error().message);
    }
    if (tp.fields[i].kind < USERPERF_TP_U8 || tp.fields[i].kind > USERPERF_TP_BYTES) {
      return make_error(EINVAL, name + ": field " + tp.fields[i].name + " has unknown kind " +
                                    std::to_string(tp.fields[i].kind));
    }
    for (std::uint32_t j = 0; j < i; ++j) {
      if (std::strcmp(tp.fields[i].name, tp.fields[j].name) == 0) {
        return make_error(EINVAL, name + ": field " + tp.fields[i].name + " appears twice");
      }
    }
  }
  return {};
}

std::string tracepoint_format(const userperf_tracepoint& tp, std::uint64_t id) {
  const Layout layout = layout_of(tp);
  std::string out = std::string("name: ") + tp.name + "\nID: " + std::to_string(id) + "\nformat:\n";
  auto field = [&out](const std::string& decl, std::uint32_t offset, std::uint32_t size,
                      bool is_signed) {
    out += "\tfield:" + decl + ";\toffset:" + std::to_string(offset) +
           ";\tsize:" + std::to_string(size) + ";\tsigned:" + (is_signed ? "1" : "0") + ";\n";
  };
  field("unsigned short common_type", 0, 2, false);
  field("unsigned char common_flags", 2, 1, false);
  field("unsigned char common_preempt_count", 3, 1, false);
  field("int common_pid", 4, 4, true);
  out += "\n";
  std::string fmt;
  std::string print_args;
  for (std::uint32_t i = 0; i < tp.nr_fields; ++i) {
    const std::uint32_t kind = tp.fields[i].kind;
    const std::string name = tp.fields[i].name;
    const FieldLayout& f = layout.fields[i];
    if (i > 0) fmt += " ";
    fmt += name + "=";
    if (kind == USERPERF_TP_STRING) {
      field("__data_loc char[] " + name, f.offset, f.size, true);
      fmt += "%s";
      print_args += ", __get_str(" + name + ")";
    } else if (kind == USERPERF_TP_BYTES) {
      field("__data_loc u8[] " + name, f.offset, f.size, false);
      fmt += "%s";
      print_args +=
          ", __print_hex(__get_dynamic_array(" + name + "), __get_dynamic_array_len(" + name + "))";
    } else {
      field(std::string(type_name(kind)) + " " + name, f.offset, f.size, f.is_signed);
      fmt += conversion(kind);
      print_args += ", REC->" + name;
    }
  }
  out += "\nprint fmt: \"" + fmt + "\"" + print_args + "\n";
  return out;
}

}  // namespace userperf::pmu
