// A report's output file written whole or not at all: into a temporary file beside it, renamed
// over it only when everything was written and flushed, so that a failed or interrupted report
// never leaves a half-written page or profile where the last good one was. "-" is stdout.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include "support/expected.hpp"

namespace userperf::report {

Expected<void> write_output_file(const std::string& path,
                                 const std::function<Expected<void>(std::FILE*)>& write);

}  // namespace userperf::report
