// The read_format block (read(2), PERF_SAMPLE_READ, PERF_RECORD_READ): one writer for every
// destination. Sink needs put(std::uint64_t) and zero(std::size_t bytes). SIGNAL-SAFE for a
// signal-safe sink.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "abi/sample_layout.hpp"
#include "core/event.hpp"

namespace userperf::core {

// An event's own count and times (PERF_SAMPLE_READ, PERF_RECORD_READ, an inherited event's own).
struct OwnValues {
  std::uint64_t count(const Event& e) const { return e.count.load(std::memory_order_relaxed); }
  void add_times(const Event& e, std::uint64_t now, std::uint64_t& enabled,
                 std::uint64_t& running) const {
    (void)e;
    (void)now;
    (void)enabled;
    (void)running;
  }
};

// A sink for emit_read_values into a plain buffer: read(2)'s, a PERF_RECORD_READ's body. Normal
// context (it allocates).
struct ReadValuesBuffer {
  std::vector<std::uint64_t> words;
  void put(std::uint64_t v) { words.push_back(v); }
  void zero(std::size_t bytes) { words.resize(words.size() + bytes / sizeof(std::uint64_t), 0); }
};

// `members` entries are written in group form: the count that sized the destination, so a group
// changing meanwhile cannot change the length (missing members are written as zeros). `values`
// gives each member's count and adds to the times what its children counted (read(2): the
// kernel's perf_event_read_value).
template <class Sink, class Values = OwnValues>
void emit_read_values(Sink& sink, const Event& event, std::uint64_t now, std::uint32_t members,
                      const Values& values = {}) {
  const std::uint64_t format = event.attr.read_format;
  auto put_entry = [&sink, format, &values](const Event& member) {
    sink.put(values.count(member));
    if (format & PERF_FORMAT_ID) sink.put(member.primary_id.load(std::memory_order_relaxed));
    if (format & PERF_FORMAT_LOST) sink.put(member.lost_samples.load(std::memory_order_relaxed));
  };
  const bool group = (format & PERF_FORMAT_GROUP) != 0;
  const Event& timed = group ? *event.leader.load(std::memory_order_acquire) : event;
  std::uint64_t enabled = 0;
  std::uint64_t running = 0;
  timed.read_times(now, enabled, running);
  values.add_times(timed, now, enabled, running);
  if (!group) {
    sink.put(values.count(event));
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
