// The error of a malformed file: EINVAL, a message naming the bad field and "at offset N", and
// the offset itself. Every check of perf.data bytes (reader, features, the report and the script
// printer) says what it found this way.
#pragma once

#include <cerrno>
#include <cstdint>
#include <string>

#include "support/expected.hpp"

namespace userperf::perfdata {

inline Error malformed_at(std::uint64_t offset, const std::string& what) {
  return make_error(EINVAL, what + " at offset " + std::to_string(offset), offset);
}

}  // namespace userperf::perfdata
