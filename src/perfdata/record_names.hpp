// perf's names of record types, the kernel's (PERF_RECORD_MMAP2) and perf's own in perf.data
// (PERF_RECORD_HEADER_ATTR, PERF_RECORD_FINISHED_ROUND, ...).
#pragma once

#include <cstdint>
#include <string>

namespace userperf::perfdata {

// perf's name of a record type it knows, else nullptr.
const char* known_record_type_name(std::uint32_t type);

// perf's name of a record type ("PERF_RECORD_MMAP2"), or "unknown type N": never empty, as it goes
// into messages about records a producer got wrong.
std::string record_type_name(std::uint32_t type);

}  // namespace userperf::perfdata
