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

// What sizing a sample with a tail found (perf_prepare_sample's results): the record's size and
// the size of each variable field, computed once and used when the fields are written.
struct PreparedSample {
  std::uint32_t size = 0;           // the whole record, header included
  std::uint32_t read_members = 0;   // group members in the READ field
  std::uint64_t callchain_nr = 0;   // entries written, after sample_max_stack and the user cut
  std::uint64_t raw_bytes = 0;      // 4 + raw->size, or 8 for the empty RAW field
  std::uint64_t stack_size = 0;     // bytes of user stack in the record (0: only the size field)
  std::uint64_t stack_dyn = 0;      // bytes actually copied
  std::uint64_t aux_available = 0;  // trace bytes the group leader holds (set before prepare)
  std::uint64_t aux_copy = 0;       // bytes of trace the sample carries
  std::uint64_t aux_size = 0;       // the AUX size field: aux_copy rounded up to 8
};

// Sizes a sample (every field, the event's SamplePlan head included) into `prepared`. False when
// the record cannot fit in 65528 bytes.
bool prepare_sample(const Event& event, const SampleData& data, PreparedSample& prepared);

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
