// What `userperf record` options ask for, turned into the RecordConfig every process of the
// command gets (protocol.hpp): attrs shaped like perf record's for user-space sampling.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "record/protocol.hpp"

namespace userperf::record {

enum class CallGraph { kNone, kFramePointer, kDwarf };

struct RecordRequest {
  std::vector<std::string> events;  // empty: cpu-clock
  std::uint64_t frequency = 0;      // -F; 0 with period 0: perf's default 1000 Hz
  std::uint64_t period = 0;         // -c
  CallGraph call_graph = CallGraph::kNone;
  std::uint32_t stack_size = 8192;  // --call-graph dwarf,SIZE
  AuxSource aux = AuxSource::kNone;
  std::uint32_t aux_sample_size = 0;  // --aux-sample; 0 with --aux: 4096
  std::uint32_t ring_pages = 128;     // -m, perf's 512 KiB
  std::uint32_t aux_pages = 16;       // -m N,AUX
  bool off_cpu = false;               // --off-cpu: one more event, offcpu-time
};

// The config id of the index-th tracepoint event: the same in every process of a recording.
inline constexpr std::uint64_t kTracepointIdBase = 1000;

// "fp", "dwarf", "dwarf,SIZE" (SIZE a multiple of 8 up to 65528, as perf checks it).
Expected<void> parse_call_graph(const std::string& text, RecordRequest& request);
// "PAGES" or "PAGES,AUX_PAGES", each a power of two.
Expected<void> parse_mmap_pages(const std::string& text, RecordRequest& request);

// Builds the config. aux_pmu_type: the attr.type of the --aux source's PMU (ignored without --aux).
// EINVAL for an unknown event, a bad combination or too many events.
Expected<RecordConfig> build_record_config(const RecordRequest& request, int aux_pmu_type);

// The name of the PMU of an event's attr.type, for PMU_MAPPINGS ("software", "tracepoint", or the
// AUX source's event name).
std::string pmu_name_of(const EventConfig& event);

}  // namespace userperf::record
