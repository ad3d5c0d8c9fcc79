#include "bpf/isa/image_codec.hpp"

#include <cstring>
#include <string>
#include <type_traits>

namespace userperf::bpf {

namespace {

// "UPBFIMG" and a format version; then fields in this machine's byte order (the image never
// leaves the machine that made it).
constexpr char kMagic[8] = {'U', 'P', 'B', 'F', 'I', 'M', 'G', '1'};
// Bounds a decoder holds an image to, far above what a verifier accepts.
constexpr std::uint32_t kMaxMaps = 4096;
constexpr std::uint32_t kMaxPrograms = 4096;
constexpr std::uint32_t kMaxInsns = 1u << 20;
constexpr std::uint32_t kMaxBytes = 1u << 28;

class Writer {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    out_.insert(out_.end(), p, p + sizeof v);
  }
  void put_bytes(const void* data, std::size_t size) {
    put(static_cast<std::uint32_t>(size));
    const auto* p = static_cast<const std::uint8_t*>(data);
    out_.insert(out_.end(), p, p + size);
  }
  void put_string(const std::string& s) { put_bytes(s.data(), s.size()); }
  std::vector<std::uint8_t> take() { return std::move(out_); }

 private:
  std::vector<std::uint8_t> out_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  template <class T>
  bool get(T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (bytes_.size() - at_ < sizeof v) return false;
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return true;
  }
  // `count` elements of T, each checked to fit before anything is allocated.
  template <class T>
  bool get_array(std::vector<T>& out, std::uint32_t max) {
    std::uint32_t count = 0;
    if (!get(count) || count > max || (bytes_.size() - at_) / sizeof(T) < count) return false;
    out.resize(count);
    if (count != 0) std::memcpy(out.data(), bytes_.data() + at_, count * sizeof(T));
    at_ += count * sizeof(T);
    return true;
  }
  bool get_string(std::string& out) {
    std::vector<char> chars;
    if (!get_array(chars, kMaxBytes)) return false;
    out.assign(chars.begin(), chars.end());
    return true;
  }
  std::size_t offset() const { return at_; }
  bool done() const { return at_ == bytes_.size(); }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t at_ = 0;
};

Error bad(const Reader& r, const char* what) {
  return make_error(
      EINVAL, std::string("bad object image at byte ") + std::to_string(r.offset()) + ": " + what);
}

}  // namespace

std::vector<std::uint8_t> encode_object_image(const ObjectImage& image) {
  Writer w;
  w.put(kMagic);
  w.put_string(image.license);
  w.put(image.kern_version);
  w.put(static_cast<std::uint32_t>(image.maps.size()));
  for (const MapSpec& m : image.maps) {
    w.put_string(m.name);
    w.put(m.type);
    w.put(m.key_size);
    w.put(m.value_size);
    w.put(m.max_entries);
    w.put(m.map_flags);
    w.put(static_cast<std::uint8_t>(m.global_data ? 1 : 0));
    w.put_bytes(m.initial_value.data(), m.initial_value.size());
  }
  w.put(static_cast<std::uint32_t>(image.programs.size()));
  for (const ProgramImage& p : image.programs) {
    w.put_string(p.name);
    w.put_string(p.section);
    w.put(p.prog_type);
    w.put(static_cast<std::uint32_t>(p.insns.size()));
    for (const Insn& insn : p.insns) w.put(insn);
  }
  return w.take();
}

Expected<ObjectImage> decode_object_image(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  ObjectImage image;
  char magic[sizeof kMagic];
  if (!r.get(magic) || std::memcmp(magic, kMagic, sizeof kMagic) != 0) {
    return bad(r, "not an object image (magic)");
  }
  if (!r.get_string(image.license) || !r.get(image.kern_version)) return bad(r, "header");
  std::uint32_t maps = 0;
  if (!r.get(maps) || maps > kMaxMaps) return bad(r, "map count");
  for (std::uint32_t i = 0; i < maps; ++i) {
    MapSpec m;
    std::uint8_t global = 0;
    if (!r.get_string(m.name) || !r.get(m.type) || !r.get(m.key_size) || !r.get(m.value_size) ||
        !r.get(m.max_entries) || !r.get(m.map_flags) || !r.get(global) || global > 1 ||
        !r.get_array(m.initial_value, kMaxBytes)) {
      return bad(r, "map");
    }
    m.global_data = global != 0;
    image.maps.push_back(std::move(m));
  }
  std::uint32_t programs = 0;
  if (!r.get(programs) || programs > kMaxPrograms) return bad(r, "program count");
  for (std::uint32_t i = 0; i < programs; ++i) {
    ProgramImage p;
    if (!r.get_string(p.name) || !r.get_string(p.section) || !r.get(p.prog_type) ||
        !r.get_array(p.insns, kMaxInsns)) {
      return bad(r, "program");
    }
    image.programs.push_back(std::move(p));
  }
  if (!r.done()) return bad(r, "bytes after the last program");
  return image;
}

}  // namespace userperf::bpf
