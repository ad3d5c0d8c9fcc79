// The state of a process at the start of a recording, as perf record synthesizes it
// (perf_event__synthesize_comm / _mmap_events): a COMM record for each thread and an MMAP2 record
// for each executable file mapping of /proc/PID/maps, so that perf report and perf script can name
// the samples' code. Each record carries the sample_id trailer the attr asks for (time 0: before
// every sample).
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>

#include "perfdata/writer.hpp"

namespace userperf::record {

struct SynthesisResult {
  std::uint32_t comms = 0;
  std::uint32_t mmaps = 0;
};

// Writes COMM for every thread of `pid` and MMAP2 for its executable mappings into `writer`,
// shaped for `attr` (sample_id_all) with `id` as the trailer's id. False when /proc/PID cannot be
// read or the writer failed (its error says why).
bool synthesize_process(pid_t pid, const perf_event_attr& attr, std::uint64_t id,
                        perfdata::Writer& writer, SynthesisResult* result = nullptr);

}  // namespace userperf::record
