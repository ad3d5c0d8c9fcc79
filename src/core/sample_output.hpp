// Writing records for an event: perf_prepare_sample / perf_output_sample, the sample_id trailer,
// LOST records, and side-band records. SIGNAL-SAFE: no locks, allocation or syscalls (a wakeup may
// make one).
#pragma once

#include <cstdint>

#include "core/event.hpp"
#include "core/sample_data.hpp"
#include "ring/output_handle.hpp"

namespace userperf::core {

// The fields of the sample_id trailer that come from the context, not the event.
struct SampleId {
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::uint64_t time = 0;
  std::uint32_t cpu = 0;
};

// Fills defaults and computes data.size once. False when the record cannot fit in 65528 bytes.
// data.time must already hold the sample's time (perf_event_overflow sets it).
bool prepare_sample(const Event& event, SampleData& data);

// Opens a record of `size` bytes in the event's buffer; writes a pending LOST record first.
// On kLost the drop is counted in event.lost_samples.
ring::OutputStatus output_begin(ring::OutputHandle& handle, Event& event, std::uint32_t size,
                                const SampleId& id);

// perf_event_output: prepare (the event's SamplePlan, and prepare_sample for a tail), begin, write
// every sample_type field in the kernel's order, end.
// Returns 0, or -ENOSPC when the sample was dropped (counted as lost), -E2BIG when it is too big.
int output_sample(Event& event, SampleData& data);

// A sample that cannot be written (too big, or its source could not build it): counted in the
// event's lost samples and reported by the ring's next LOST record, never dropped silently.
void count_lost_sample(Event& event);

// Writes a whole non-sample record: header, body, and the sample_id trailer when sample_id_all.
// body_size is padded to 8 with zeros. Returns 0 or -ENOSPC.
int output_sideband(Event& event, std::uint32_t type, std::uint16_t misc, const void* body,
                    std::uint32_t body_size, const SampleId& id);

void write_sample_id(ring::OutputHandle& handle, const Event& event, const SampleId& id);

}  // namespace userperf::core
