// The HEADER_TRACING_DATA feature body: what libtraceevent needs to decode tracepoint samples
// (perf 6.1's tools/perf/util/trace-event-read.c trace_report reads it; trace-event-info.c writes
// it from tracefs). userperf writes it from the format texts of its user tracepoints: no kernel
// ftrace events, no kallsyms, no printk formats, no saved cmdlines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace userperf::perfdata {

struct TracepointFormat {
  std::string system;  // the provider: "myapp"
  std::string name;    // "request"
  std::uint64_t id = 0;
  std::string format;  // libtraceevent's "format" file text, "name: ...\nID: ...\n..."
};

// Layout (native endianness, little endian here): "\x17\x08\x44tracing", "0.6\0", endianness
// (u8, 0 = little), sizeof(long) (u8), page size (u32); "header_page\0" u64 size + text,
// "header_event\0" u64 size + text; u32 ftrace format count (0); u32 system count, then per
// system its name\0, u32 event count and per event u64 size + format text (systems in order of
// first appearance); u32 kallsyms size (0); u32 printk size (0); u64 saved cmdlines size (0).
std::vector<std::uint8_t> encode_tracing_data(const std::vector<TracepointFormat>& formats);

}  // namespace userperf::perfdata
