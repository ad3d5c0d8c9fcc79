// What a tracepoint descriptor (include/userperf/tracepoint.h) declares, as pure functions of it:
// whether it is valid, the layout of its record (the kernel's struct layout: each field aligned to
// its size after the 8-byte common header, strings and byte arrays as __data_loc words) and the
// libtraceevent format text that describes that record. The registry and the write path
// (tracepoint_pmu.cpp) build on these; tests and the fuzzer call them directly.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "support/expected.hpp"
#include "userperf/tracepoint.h"

namespace userperf::pmu {

inline constexpr std::uint32_t kCommonSize = 8;  // common_type, flags, preempt_count, common_pid

struct FieldLayout {
  std::uint32_t offset = 0;
  std::uint32_t size = 0;  // in the fixed part (4 for __data_loc)
  bool is_signed = false;
  bool dynamic = false;
};

struct Layout {
  std::array<FieldLayout, USERPERF_TP_MAX_FIELDS> fields{};
  std::uint32_t fixed_size = kCommonSize;  // common header + fields, padded to the alignment
  bool padded = false;                     // bytes between or after the fields (written as 0)
};

// The fields in declaration order, each aligned to its size; `tp` must have passed the check.
Layout layout_of(const userperf_tracepoint& tp);

// "provider:name", the name the recorder defines ids for.
std::string full_name(const userperf_tracepoint& tp);

// The descriptor's validity: EINVAL with the reason when it is not valid.
Expected<void> tracepoint_check(const userperf_tracepoint& tp);

// The libtraceevent format text of `tp` under `id` (the perf.data writer's tracing data).
std::string tracepoint_format(const userperf_tracepoint& tp, std::uint64_t id);

}  // namespace userperf::pmu
