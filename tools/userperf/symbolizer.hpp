// Names for code addresses of this process (dladdr over the exported dynamic symbols).
#pragma once

#include <cstdint>
#include <string>

namespace userperf::cli {

// The demangled name of the function containing `ip`, or the address in hex when unknown.
std::string symbol_name(std::uint64_t ip);

}  // namespace userperf::cli
