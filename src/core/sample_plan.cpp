#include "core/sample_plan.hpp"

#include <cstddef>

#include "core/sample_data.hpp"

namespace userperf::core {

SamplePlan plan_sample(std::uint64_t sample_type) {
  // perf_output_sample's order.
  struct Word {
    std::uint64_t bit;
    std::size_t offset;
  };
  static constexpr Word kHead[] = {
      {PERF_SAMPLE_IDENTIFIER, offsetof(SampleData, id)},
      {PERF_SAMPLE_IP, offsetof(SampleData, ip)},
      {PERF_SAMPLE_TID, offsetof(SampleData, pid)},
      {PERF_SAMPLE_TIME, offsetof(SampleData, time)},
      {PERF_SAMPLE_ADDR, offsetof(SampleData, addr)},
      {PERF_SAMPLE_ID, offsetof(SampleData, id)},
      {PERF_SAMPLE_STREAM_ID, offsetof(SampleData, stream_id)},
      {PERF_SAMPLE_CPU, offsetof(SampleData, cpu)},
      {PERF_SAMPLE_PERIOD, offsetof(SampleData, period)},
  };
  static_assert(offsetof(SampleData, tid) == offsetof(SampleData, pid) + 4);
  static_assert(offsetof(SampleData, cpu_reserved) == offsetof(SampleData, cpu) + 4);
  SamplePlan plan;
  for (const Word& word : kHead) {
    if (sample_type & word.bit) {
      plan.head_offsets[plan.head_words++] = static_cast<std::uint16_t>(word.offset);
    }
  }
  const std::uint64_t tail = sample_type & ~kSampleHeadFields;
  plan.tail = tail == 0                 ? SamplePlan::Tail::kNone
              : tail == PERF_SAMPLE_RAW ? SamplePlan::Tail::kRaw
              : tail == PERF_SAMPLE_AUX ? SamplePlan::Tail::kAux
                                        : SamplePlan::Tail::kAny;
  plan.head_size = static_cast<std::uint32_t>(sizeof(perf_event_header) + 8 * plan.head_words);
  return plan;
}

}  // namespace userperf::core
