// A minimal protocol buffers encoder: the wire format of
// https://protobuf.dev/programming-guides/encoding/ for the few field kinds profile.proto uses —
// varints (wire type 0: int64, uint64, bool), length-delimited fields (wire type 2: strings,
// nested messages, packed repeated varints). A message is built bottom-up: a nested message is
// encoded into its own ProtoEncoder and then appended to its parent as bytes. No decoder: what this
// writes is checked by decoders nobody here wrote (Google's pprof; tests/unit/report has the
// byte-level tests).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace userperf::report {

class ProtoEncoder {
 public:
  // Field kinds of the wire format.
  enum WireType : std::uint32_t { kVarint = 0, kLengthDelimited = 2 };

  // Appends `value` as a base-128 varint: 7 bits a byte, least significant first, the high bit
  // set on every byte but the last (1 to 10 bytes).
  static void append_varint(std::string& out, std::uint64_t value);

  // A varint field (int64 negative values are their two's complement: 10 bytes, as protoc
  // writes them). Proto3 omits fields equal to their default: the *_field functions write
  // nothing for 0 and false, so a reader sees the same default either way.
  void uint64_field(std::uint32_t field, std::uint64_t value);
  void int64_field(std::uint32_t field, std::int64_t value) {
    uint64_field(field, static_cast<std::uint64_t>(value));
  }
  void bool_field(std::uint32_t field, bool value) { uint64_field(field, value ? 1 : 0); }
  // A length-delimited field: a string (written even when empty: a repeated string's "" is an
  // element) or an encoded nested message.
  void bytes_field(std::uint32_t field, std::string_view bytes);
  void message_field(std::uint32_t field, const ProtoEncoder& message) {
    bytes_field(field, message.bytes());
  }
  // A packed repeated varint field (proto3's default encoding for repeated scalars): one key, the
  // length, then the varints. Nothing when `values` is empty.
  void packed_uint64_field(std::uint32_t field, std::span<const std::uint64_t> values);
  void packed_int64_field(std::uint32_t field, std::span<const std::int64_t> values);

  const std::string& bytes() const { return bytes_; }
  void clear() { bytes_.clear(); }

 private:
  void key(std::uint32_t field, WireType type) {
    append_varint(bytes_, (static_cast<std::uint64_t>(field) << 3) | type);
  }
  std::string bytes_;
  std::string scratch_;  // a packed field's payload before its length is known
};

// A profile.proto string table: each distinct string once, index 0 the empty string (as
// profile.proto requires), indexes in order of first use.
class StringTable {
 public:
  StringTable() { index(""); }
  std::int64_t index(std::string_view text);
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, std::int64_t> indexes_;
};

}  // namespace userperf::report
