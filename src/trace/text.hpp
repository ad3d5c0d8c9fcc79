// Text pieces shared by the decoders' line output.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trace/aux_decoder.hpp"

namespace userperf::trace {

// "seconds.nanoseconds" of a nanosecond timestamp.
void append_time(std::string& out, std::uint64_t ns);
// "0x..." of a code address, or the symbolizer's name for it when it has one.
void append_address(std::string& out, std::uint64_t address, Symbolize symbolize, void* context);
// Printable ASCII as is; backslash, \n, \r, \t as C escapes; every other byte as \xNN.
void append_escaped(std::string& out, std::string_view bytes);

}  // namespace userperf::trace
