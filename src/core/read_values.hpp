// The read_format block (read(2), PERF_SAMPLE_READ, PERF_RECORD_READ): one writer for every
// destination. Sink needs put(std::uint64_t) and zero(std::size_t bytes). SIGNAL-SAFE for a
// signal-safe sink.
#pragma once

#include <atomic>
#include <cstdint>

#include "abi/sample_layout.hpp"
#include "core/event.hpp"

namespace userperf::core {

// `members` entries are written in group form: the count that sized the destination, so a group
// changing meanwhile cannot change the length (missing members are written as zeros).
template <class Sink>
void emit_read_values(Sink& sink, const Event& event, std::uint64_t now, std::uint32_t members) {
  const std::uint64_t format = event.attr.read_format;
  auto put_entry = [&sink, format](const Event& member) {
    sink.put(member.count.load(std::memory_order_relaxed));
    if (format & PERF_FORMAT_ID) sink.put(member.primary_id.load(std::memory_order_relaxed));
    if (format & PERF_FORMAT_LOST) sink.put(member.lost_samples.load(std::memory_order_relaxed));
  };
  const bool group = (format & PERF_FORMAT_GROUP) != 0;
  const Event& timed = group ? *event.leader.load(std::memory_order_acquire) : event;
  std::uint64_t enabled = 0;
  std::uint64_t running = 0;
  timed.read_times(now, enabled, running);
  if (!group) {
    sink.put(event.count.load(std::memory_order_relaxed));
    if (format & PERF_FORMAT_TOTAL_TIME_ENABLED) sink.put(enabled);
    if (format & PERF_FORMAT_TOTAL_TIME_RUNNING) sink.put(running);
    if (format & PERF_FORMAT_ID) sink.put(event.primary_id.load(std::memory_order_relaxed));
    if (format & PERF_FORMAT_LOST) sink.put(event.lost_samples.load(std::memory_order_relaxed));
    return;
  }
  sink.put(std::uint64_t{members});
  if (format & PERF_FORMAT_TOTAL_TIME_ENABLED) sink.put(enabled);
  if (format & PERF_FORMAT_TOTAL_TIME_RUNNING) sink.put(running);
  const Event* member = &timed;
  for (std::uint32_t i = 0; i < members; ++i) {
    if (member == nullptr) {
      sink.zero(abi::read_entry_size(format));
      continue;
    }
    put_entry(*member);
    member = i == 0 ? member->first_sibling.load(std::memory_order_acquire)
                    : member->next_sibling.load(std::memory_order_acquire);
  }
}

}  // namespace userperf::core
