// A number as perf tools and userperf's messages write it: "0x" and lower-case hex digits ("0x0",
// "0x7f"). One definition for the script printer, the trace decoders and the eBPF assembler and
// messages. Bytes as lower-case hex digits, two per byte ("1f8b..."): build ids, the recorder's
// protocol.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

namespace userperf::support {

inline std::string hex(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIx64, value);
  return text;
}

inline std::string hex_bytes(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(bytes.size() * 2);
  for (std::uint8_t byte : bytes) {
    text += kDigits[byte >> 4];
    text += kDigits[byte & 15];
  }
  return text;
}

}  // namespace userperf::support
