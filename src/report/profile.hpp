// A perf.data file's samples summed per (command, shared object, symbol), per event, weighted by
// PERF_SAMPLE_PERIOD: `self` counts the samples whose leaf is the symbol, `children` the samples
// with the symbol anywhere in their call chain (once per sample), as perf report's columns.
//
// Records are replayed in time order (perf's rings are per CPU, so a sample may precede in the file
// the MMAP it needs): MMAP/MMAP2/COMM/FORK build the address spaces, samples are resolved against
// them. Call chains come from PERF_SAMPLE_CALLCHAIN (frame pointers: return addresses, looked up at
// address - 1 like every caller frame) or, when the sample carries user registers and a stack
// copy, from unwinding that copy (DwarfUnwinder); kernel frames come from the callchain.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "perfdata/reader.hpp"
#include "report/symbol_resolver.hpp"
#include "support/expected.hpp"

namespace userperf::report {

struct ProfileRow {
  std::string command;
  std::string dso;
  std::string symbol;
  bool kernel = false;
  std::uint64_t self = 0;      // period of the samples whose leaf this is
  std::uint64_t children = 0;  // period of the samples with this anywhere in the chain
};

struct EventProfile {
  std::string name;  // EVENT_DESC's name, else perf's name for the attr ("cpu-clock", ...)
  std::uint64_t samples = 0;
  std::uint64_t total_period = 0;
  std::vector<ProfileRow> rows;  // unordered
};

struct Profile {
  std::vector<EventProfile> events;  // one per attr, in attr order
  // PERF_RECORD_LOST_SAMPLES counts: perf report's "Total Lost Samples" (perf record, and userperf
  // record, write each event's lost samples as one at the end, those of full rings included).
  std::uint64_t lost_samples = 0;
  // PERF_RECORD_LOST records (perf's "lost chunks") and their counts: losses a ring reported
  // while it ran, also in the LOST_SAMPLES of a file that has them.
  std::uint64_t lost_records = 0;
  std::uint64_t lost_in_records = 0;
  std::uint64_t dwarf_samples = 0;  // samples whose user frames were unwound from a stack copy
};

// One resolved sample: its event (attr index), command, period and locations, leaf first.
struct ResolvedSample {
  int event = 0;
  const std::string& command;
  std::uint64_t period = 0;
  const std::vector<Location>& chain;
};

struct ProfileOptions {
  std::size_t max_frames = 127;  // perf's default --max-stack
  // Called for every sample as it is counted (tests, call-graph views); may be empty.
  std::function<void(const ResolvedSample&)> on_sample;
};

// The profile, or the first malformed record (malformed_at its file offset).
Expected<Profile> build_profile(const perfdata::Reader& reader, const ProfileOptions& options);

// perf's name for an attr without EVENT_DESC: "cpu-clock", "cycles", ... else "type/config".
std::string event_name(const perf_event_attr& attr);

}  // namespace userperf::report
