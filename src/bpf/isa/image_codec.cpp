#include "bpf/isa/image_codec.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "support/byte_reader.hpp"
#include "support/byte_writer.hpp"

namespace userperf::bpf {

namespace {

// "UPBFIMG" and a format version; then fields in this machine's byte order (the image never
// leaves the machine that made it).
constexpr char kMagic[8] = {'U', 'P', 'B', 'F', 'I', 'M', 'G', '7'};
// Bounds a decoder holds an image to, far above what a verifier accepts.
constexpr std::uint32_t kMaxMaps = 4096;
constexpr std::uint32_t kMaxPrograms = 4096;
constexpr std::uint32_t kMaxInsns = 1u << 20;
constexpr std::uint32_t kMaxBytes = 1u << 28;
constexpr std::uint32_t kMaxFuncArgs = 64;  // far above the 5 a prototype may have

// A u32 length, then the bytes.
void put_bytes(support::ByteWriter& w, const void* data, std::size_t size) {
  w.put(static_cast<std::uint32_t>(size));
  w.put_bytes(data, size);
}
void put_string(support::ByteWriter& w, const std::string& s) {
  put_bytes(w, s.data(), s.size());
}

// A u32 count, then `count` elements of T, the count bounded by `max` and by the bytes left
// before anything is allocated.
template <class T>
bool get_array(support::ByteReader& r, std::vector<T>& out, std::uint32_t max) {
  std::uint32_t count = 0;
  if (!r.read(count)) return false;
  if (count > max) return r.fail();
  return r.read_array(count, out);
}
bool get_string(support::ByteReader& r, std::string& out) {
  std::vector<char> chars;
  if (!get_array(r, chars, kMaxBytes)) return false;
  out.assign(chars.begin(), chars.end());
  return true;
}

void put_field(support::ByteWriter& w, const KernelField& f) {
  w.put(f.offset);
  w.put(f.size);
}
void put_task_layout(support::ByteWriter& w, KernelTaskLayout t) {
  w.put(static_cast<std::uint8_t>(t.present ? 1 : 0));
  w.put(t.task_size);
  w.put(t.mm_size);
  w.put(t.vma_size);
  w.put(t.file_size);
  w.put(t.dentry_size);
  for (const KernelField* f : t.fields()) put_field(w, *f);
}
void put_btf_funcs(support::ByteWriter& w, const std::vector<BtfFunc>& funcs) {
  w.put(static_cast<std::uint32_t>(funcs.size()));
  for (const BtfFunc& f : funcs) {
    w.put(f.start);
    put_string(w, f.name);
    w.put(static_cast<std::uint8_t>(f.global ? 1 : 0));
    w.put(static_cast<std::uint8_t>(f.returns_scalar ? 1 : 0));
    w.put(static_cast<std::uint32_t>(f.args.size()));
    for (const BtfFuncArg& a : f.args) {
      w.put(static_cast<std::uint8_t>(a.kind));
      w.put(a.mem_size);
      w.put(a.size_error);
      put_string(w, a.btf_kind);
      put_string(w, a.type_name);
    }
  }
}
bool get_flag(support::ByteReader& r, bool& flag) {
  std::uint8_t byte = 0;
  if (!r.read(byte) || byte > 1) return r.fail();
  flag = byte != 0;
  return true;
}
// Each function starts inside the program (the verifier indexes instructions by it).
bool get_btf_funcs(support::ByteReader& r, std::size_t insns, std::vector<BtfFunc>& funcs) {
  std::uint32_t count = 0;
  if (!r.read(count) || count > insns) return r.fail();
  for (std::uint32_t i = 0; i < count; ++i) {
    BtfFunc f;
    std::uint32_t args = 0;
    if (!r.read(f.start) || f.start >= insns || !get_string(r, f.name) || !get_flag(r, f.global) ||
        !get_flag(r, f.returns_scalar) || !r.read(args) || args > kMaxFuncArgs) {
      return r.fail();
    }
    for (std::uint32_t k = 0; k < args; ++k) {
      BtfFuncArg a;
      std::uint8_t kind = 0;
      if (!r.read(kind) || kind > static_cast<std::uint8_t>(BtfFuncArg::Kind::kUnsupported) ||
          !r.read(a.mem_size) || !r.read(a.size_error) || !get_string(r, a.btf_kind) ||
          !get_string(r, a.type_name)) {
        return r.fail();
      }
      a.kind = static_cast<BtfFuncArg::Kind>(kind);
      f.args.push_back(std::move(a));
    }
    funcs.push_back(std::move(f));
  }
  return true;
}

// The layout is checked as the runtime relies on it (KernelTaskLayout::consistent).
bool get_task_layout(support::ByteReader& r, KernelTaskLayout& t) {
  std::uint8_t present = 0;
  if (!r.read(present) || present > 1 || !r.read(t.task_size) || !r.read(t.mm_size) ||
      !r.read(t.vma_size) || !r.read(t.file_size) || !r.read(t.dentry_size)) {
    return false;
  }
  t.present = present != 0;
  for (KernelField* f : t.fields()) {
    if (!r.read(f->offset) || !r.read(f->size)) return false;
  }
  return t.consistent() || r.fail();
}

// A map-in-map's inner template: a u8 flag, then type, sizes, max_entries, flags (one level:
// a template has no template of its own, as the kernel refuses a map-in-map as inner map).
void put_inner_map(support::ByteWriter& w, const MapSpec& m) {
  const MapSpec* inner = inner_map_template(m);
  w.put(static_cast<std::uint8_t>(inner ? 1 : 0));
  if (inner == nullptr) return;
  put_string(w, inner->name);
  w.put(inner->type);
  w.put(inner->key_size);
  w.put(inner->value_size);
  w.put(inner->max_entries);
  w.put(inner->map_flags);
}
bool get_inner_map(support::ByteReader& r, MapSpec& m) {
  std::uint8_t present = 0;
  if (!r.read(present) || present > 1) return false;
  if (present == 0) return true;
  MapSpec inner;
  if (!get_string(r, inner.name) || !r.read(inner.type) || !r.read(inner.key_size) ||
      !r.read(inner.value_size) || !r.read(inner.max_entries) || !r.read(inner.map_flags)) {
    return false;
  }
  m.inner_map.push_back(std::move(inner));
  return true;
}

// The kernel's struct types (KernelBtfTypes): a u32 count, each type, then the roots' indexes.
constexpr std::uint32_t kMaxKernelTypes = 1u << 20;
void put_kernel_btf(support::ByteWriter& w, const KernelBtfTypes& bt) {
  w.put(static_cast<std::uint32_t>(bt.types.size()));
  for (const KernelBtfType& t : bt.types) {
    w.put(static_cast<std::uint8_t>(t.kind));
    put_string(w, t.name);
    w.put(t.size);
    w.put(t.target);
    w.put(t.nelems);
    w.put(static_cast<std::uint8_t>(t.tag));
    w.put(static_cast<std::uint8_t>(t.opaque ? 1 : 0));
    w.put(static_cast<std::uint32_t>(t.members.size()));
    for (const KernelBtfMember& m : t.members) {
      put_string(w, m.name);
      w.put(m.type);
      w.put(m.bit_offset);
      w.put(m.bitfield_size);
    }
  }
  w.put(bt.task_struct);
  w.put(bt.vm_area_struct);
}

// Every index inside the table, kinds and tags known, the roots structs: what the verifier's
// walk relies on.
bool get_kernel_btf(support::ByteReader& r, KernelBtfTypes& bt) {
  using Kind = KernelBtfType::Kind;
  std::uint32_t count = 0;
  if (!r.read(count) || count > kMaxKernelTypes || count > r.remaining()) return r.fail();
  bt.types.resize(count);
  for (KernelBtfType& t : bt.types) {
    std::uint8_t kind = 0;
    std::uint8_t tag = 0;
    std::uint8_t opaque = 0;
    std::uint32_t members = 0;
    if (!r.read(kind) || kind > static_cast<std::uint8_t>(Kind::kOther) || !get_string(r, t.name) ||
        !r.read(t.size) || !r.read(t.target) || t.target >= count || !r.read(t.nelems) ||
        !r.read(tag) || tag > static_cast<std::uint8_t>(KernelBtfType::Tag::kRcu) ||
        !r.read(opaque) || opaque > 1 || !r.read(members) || members > r.remaining()) {
      return r.fail();
    }
    t.kind = static_cast<Kind>(kind);
    t.tag = static_cast<KernelBtfType::Tag>(tag);
    t.opaque = opaque != 0;
    t.members.resize(members);
    for (KernelBtfMember& m : t.members) {
      if (!get_string(r, m.name) || !r.read(m.type) || m.type >= count || !r.read(m.bit_offset) ||
          !r.read(m.bitfield_size)) {
        return r.fail();
      }
    }
  }
  if (!r.read(bt.task_struct) || !r.read(bt.vm_area_struct)) return false;
  const auto is_struct_or_absent = [&](std::uint32_t i) {
    return i == 0 ? true : i < count && bt.types[i].kind == Kind::kStruct;
  };
  return (count == 0
              ? bt.task_struct == 0 && bt.vm_area_struct == 0
              : is_struct_or_absent(bt.task_struct) && is_struct_or_absent(bt.vm_area_struct)) ||
         r.fail();
}

Error bad(const support::ByteReader& r, const char* what) {
  return make_error(
      EINVAL, std::string("bad object image at byte ") + std::to_string(r.offset()) + ": " + what);
}

}  // namespace

std::vector<std::uint8_t> encode_object_image(const ObjectImage& image) {
  std::vector<std::uint8_t> out;
  support::ByteWriter w(out);
  w.put(kMagic);
  put_string(w, image.license);
  w.put(image.kern_version);
  put_task_layout(w, image.task_layout);
  put_kernel_btf(w, image.kernel_btf != nullptr ? *image.kernel_btf : KernelBtfTypes{});
  w.put(static_cast<std::uint32_t>(image.maps.size()));
  for (const MapSpec& m : image.maps) {
    put_string(w, m.name);
    w.put(m.type);
    w.put(m.key_size);
    w.put(m.value_size);
    w.put(m.max_entries);
    w.put(m.map_flags);
    w.put(static_cast<std::uint8_t>(m.global_data ? 1 : 0));
    put_bytes(w, m.initial_value.data(), m.initial_value.size());
    w.put(static_cast<std::uint32_t>(m.initial_slots.size()));
    for (const MapSpec::Slot& slot : m.initial_slots) {
      w.put(slot.index);
      put_string(w, slot.name);
    }
    put_inner_map(w, m);
  }
  w.put(static_cast<std::uint32_t>(image.programs.size()));
  for (const ProgramImage& p : image.programs) {
    put_string(w, p.name);
    put_string(w, p.section);
    w.put(p.prog_type);
    w.put(static_cast<std::uint32_t>(p.insns.size()));
    for (const Insn& insn : p.insns) w.put(insn);
    w.put(static_cast<std::uint8_t>(p.btf_func_info ? 1 : 0));
    put_btf_funcs(w, p.btf_funcs);
  }
  return out;
}

Expected<ObjectImage> decode_object_image(std::span<const std::uint8_t> bytes) {
  support::ByteReader r(bytes);
  ObjectImage image;
  char magic[sizeof kMagic];
  if (!r.read(magic) || std::memcmp(magic, kMagic, sizeof kMagic) != 0) {
    return bad(r, "not an object image (magic)");
  }
  if (!get_string(r, image.license) || !r.read(image.kern_version)) return bad(r, "header");
  if (!get_task_layout(r, image.task_layout)) return bad(r, "task_struct layout");
  KernelBtfTypes kernel_btf;
  if (!get_kernel_btf(r, kernel_btf)) return bad(r, "kernel struct types");
  if (kernel_btf.present()) {
    image.kernel_btf = std::make_shared<const KernelBtfTypes>(std::move(kernel_btf));
  }
  std::uint32_t maps = 0;
  if (!r.read(maps) || maps > kMaxMaps) return bad(r, "map count");
  for (std::uint32_t i = 0; i < maps; ++i) {
    MapSpec m;
    std::uint8_t global = 0;
    if (!get_string(r, m.name) || !r.read(m.type) || !r.read(m.key_size) || !r.read(m.value_size) ||
        !r.read(m.max_entries) || !r.read(m.map_flags) || !r.read(global) || global > 1 ||
        !get_array(r, m.initial_value, kMaxBytes)) {
      return bad(r, "map");
    }
    std::uint32_t slots = 0;
    if (!r.read(slots) || slots > m.max_entries) return bad(r, "map slots");
    for (std::uint32_t k = 0; k < slots; ++k) {
      MapSpec::Slot slot;
      if (!r.read(slot.index) || !get_string(r, slot.name)) return bad(r, "map slot");
      m.initial_slots.push_back(std::move(slot));
    }
    if (!get_inner_map(r, m)) return bad(r, "inner map template");
    m.global_data = global != 0;
    image.maps.push_back(std::move(m));
  }
  std::uint32_t programs = 0;
  if (!r.read(programs) || programs > kMaxPrograms) return bad(r, "program count");
  for (std::uint32_t i = 0; i < programs; ++i) {
    ProgramImage p;
    std::uint8_t btf_func_info = 0;
    if (!get_string(r, p.name) || !get_string(r, p.section) || !r.read(p.prog_type) ||
        !get_array(r, p.insns, kMaxInsns) || !r.read(btf_func_info) || btf_func_info > 1 ||
        !get_btf_funcs(r, p.insns.size(), p.btf_funcs)) {
      return bad(r, "program");
    }
    p.btf_func_info = btf_func_info != 0;
    image.programs.push_back(std::move(p));
  }
  if (!r.done()) return bad(r, "bytes after the last program");
  return image;
}

}  // namespace userperf::bpf
