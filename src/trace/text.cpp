#include "trace/text.hpp"
#include "support/hex.hpp"

#include <cinttypes>
#include <cstdio>

namespace userperf::trace {

void append_time(std::string& out, std::uint64_t ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%" PRIu64 ".%09" PRIu64, ns / 1'000'000'000u,
                ns % 1'000'000'000u);
  out += buf;
}

void append_address(std::string& out, std::uint64_t address, Symbolize symbolize, void* context) {
  if (symbolize != nullptr) {
    std::string name = symbolize(address, context);
    if (!name.empty()) {
      out += name;
      return;
    }
  }
  out += support::hex(address);
}

void append_escaped(std::string& out, std::string_view bytes) {
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out += ch;
        } else {
          char buf[5];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        }
    }
  }
}

}  // namespace userperf::trace
