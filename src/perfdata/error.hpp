// Failures of the perf.data writer and reader: an errno and a message naming what failed and, for
// a file being read, the byte offset of the offending field.
#pragma once

#include <cerrno>
#include <cstdint>
#include <string>

namespace userperf::perfdata {

struct Error {
  int code = 0;  // errno (EINVAL for a malformed file or a bad argument); 0: no error
  std::string message;
  explicit operator bool() const { return code != 0; }
};

}  // namespace userperf::perfdata
