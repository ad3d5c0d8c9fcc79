#include "report/protobuf_encoder.hpp"

namespace userperf::report {

void ProtoEncoder::append_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void ProtoEncoder::uint64_field(std::uint32_t field, std::uint64_t value) {
  if (value == 0) return;
  key(field, kVarint);
  append_varint(bytes_, value);
}

void ProtoEncoder::bytes_field(std::uint32_t field, std::string_view bytes) {
  key(field, kLengthDelimited);
  append_varint(bytes_, bytes.size());
  bytes_.append(bytes);
}

void ProtoEncoder::packed_uint64_field(std::uint32_t field, std::span<const std::uint64_t> values) {
  if (values.empty()) return;
  scratch_.clear();
  for (std::uint64_t value : values) append_varint(scratch_, value);
  bytes_field(field, scratch_);
}

void ProtoEncoder::packed_int64_field(std::uint32_t field, std::span<const std::int64_t> values) {
  if (values.empty()) return;
  scratch_.clear();
  for (std::int64_t value : values) append_varint(scratch_, static_cast<std::uint64_t>(value));
  bytes_field(field, scratch_);
}

std::int64_t StringTable::index(std::string_view text) {
  auto [it, fresh] =
      indexes_.try_emplace(std::string(text), static_cast<std::int64_t>(strings_.size()));
  if (fresh) strings_.emplace_back(text);
  return it->second;
}

}  // namespace userperf::report
