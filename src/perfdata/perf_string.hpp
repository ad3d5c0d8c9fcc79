// perf's strings in perf.data feature bodies: {u32 len; char s[len]}, len counting the NUL and the
// padding to kStringAlign (perf's do_write_string / do_read_string).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "perfdata/format.hpp"
#include "support/byte_reader.hpp"
#include "support/byte_writer.hpp"

namespace userperf::perfdata {

inline void write_perf_string(support::ByteWriter& out, const std::string& text) {
  const std::uint32_t len = (text.size() + 1 + kStringAlign - 1) / kStringAlign * kStringAlign;
  out.put(len);
  out.put_bytes(text.data(), text.size());
  out.put_zeros(len - text.size());
}

// The text ends at the first NUL inside len (or at len).
inline bool read_perf_string(support::ByteReader& in, std::string& out) {
  std::uint32_t len = 0;
  std::span<const std::uint8_t> text;
  if (!in.read(len) || !in.bytes(len, text)) return false;
  const char* chars = reinterpret_cast<const char*>(text.data());
  out.assign(chars, len == 0 ? 0 : strnlen(chars, len));
  return true;
}

}  // namespace userperf::perfdata
