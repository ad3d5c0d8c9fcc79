// A number as perf tools and userperf's messages write it: "0x" and lower-case hex digits ("0x0",
// "0x7f"). One definition for the script printer, the trace decoders and the eBPF assembler and
// messages.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>

namespace userperf::support {

inline std::string hex(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIx64, value);
  return text;
}

}  // namespace userperf::support
