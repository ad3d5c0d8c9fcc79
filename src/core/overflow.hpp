// The overflow path (the kernel's __perf_event_overflow): throttling, frequency adaptation, the
// overflow handler (BPF), the refresh limit, then output. SIGNAL-SAFE.
#pragma once

#include <cstdint>

#include "core/event.hpp"
#include "core/sample_data.hpp"
#include "ring/local_ops.hpp"
#include "support/task_ids.hpp"

namespace userperf::core {

struct ThrottleConfig {
  std::atomic<std::uint32_t> max_samples_per_tick{400};  // DIV_ROUND_UP(max_sample_rate, HZ)
  std::uint64_t tick_ns = 4'000'000;                     // HZ = 250, as on these machines
};

enum class OverflowResult { kWritten, kDropped, kThrottled, kStopped, kFiltered };

// Called by a PMU when `event` overflowed. data.period must hold the period that elapsed.
// `throttle` is the kernel's argument of __perf_event_overflow: every overflow counts towards
// max_samples_per_tick, but only one with `throttle` set can stop the event; one without it is
// still refused while the event is throttled. perf_event_overflow (hardware PMUs, the hrtimer of
// cpu-clock/task-clock) passes true; perf_swevent_overflow false for the first overflow of a call.
OverflowResult perf_event_overflow(Event& event, SampleData& data, ThrottleConfig& throttle,
                                   bool can_throttle);

// Counts `delta` into a sampling event and reports each period boundary crossed to `on_overflow`
// (the software-event path, perf_swevent_event/perf_swevent_overflow), which is called as
// on_overflow(period, throttle) and returns the OverflowResult of the engine's overflow. As in
// perf_swevent_overflow, the first overflow of a call is not throttled and the later ones are, and
// the call stops at the first overflow that was throttled or found the event stopped (the
// periods it leaves are consumed, as perf_swevent_set_period's are). Returns the overflows.
//
// A per-thread event counted on its own thread (the kernel counts a task's event only where the
// task runs, with local64_t) takes unlocked read-modify-writes that a signal on the thread cannot
// tear; any other caller (a CPU-wide event, a test counting from elsewhere) takes locked ones.
template <class OnOverflow>
std::uint64_t count_and_overflow(Event& event, std::uint64_t delta, OnOverflow&& on_overflow) {
  const bool local = event.pid == support::current_tid();
  auto add = [local](auto& counter, auto n) {
    if (local) {
      ring::local_add(counter, n);
    } else {
      counter.fetch_add(n, std::memory_order_relaxed);
    }
  };
  add(event.count, delta);
  const std::uint64_t period = event.sample_period.load(std::memory_order_relaxed);
  if (period == 0) return 0;
  const auto signed_delta = static_cast<std::int64_t>(delta);
  std::int64_t left;
  if (local) {
    // A handler on this thread that counts in between takes the crossings it finds, ours too.
    ring::local_add(event.period_left, -signed_delta);
    left = event.period_left.load(std::memory_order_relaxed);
  } else {
    left = event.period_left.fetch_sub(signed_delta, std::memory_order_relaxed) - signed_delta;
  }
  std::uint64_t overflows = 0;
  bool stopped = false;
  while (left <= 0) {
    add(event.period_left, static_cast<std::int64_t>(period));
    left += static_cast<std::int64_t>(period);
    const bool throttle = overflows != 0;
    ++overflows;
    if (stopped) continue;
    const OverflowResult result = on_overflow(period, throttle);
    stopped = result == OverflowResult::kThrottled || result == OverflowResult::kStopped;
  }
  return overflows;
}

}  // namespace userperf::core
