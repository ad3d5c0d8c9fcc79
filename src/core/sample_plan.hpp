// A sample's layout, planned once per event at open (the kernel caches header_size and
// id_header_size the same way): the record's head, every field from IDENTIFIER to PERIOD, is a
// run of u64 words that SampleData holds at fixed offsets, so writing it is one load and one store
// per word with no test of sample_type. Only a sample_type with fields after PERIOD (READ,
// CALLCHAIN, RAW, registers, stack, AUX...) has a tail sized per sample: RAW alone by its
// fragments, anything else by prepare_sample.
#pragma once

#include <linux/perf_event.h>

#include <array>
#include <cstdint>

namespace userperf::core {

// PERF_SAMPLE_* bits whose fields come before READ in the record: one u64 word each.
constexpr std::uint64_t kSampleHeadFields = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
                                            PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
                                            PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
                                            PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;

struct SamplePlan {
  std::uint32_t head_words = 0;                 // u64 words after the header
  std::array<std::uint16_t, 9> head_offsets{};  // offsetof(SampleData, word), in record order
  // The fields after PERIOD: none; RAW alone (a tracepoint's) or AUX alone, each sized by itself
  // without prepare_sample; or any others (sized by prepare_sample).
  enum class Tail : std::uint8_t { kNone, kRaw, kAux, kAny };
  Tail tail = Tail::kNone;
  std::uint32_t head_size = 0;  // header + head words, in bytes
};

SamplePlan plan_sample(std::uint64_t sample_type);

}  // namespace userperf::core
