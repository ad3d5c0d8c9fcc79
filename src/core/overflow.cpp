// SIGNAL-SAFE: see overflow.hpp.
#include "core/overflow.hpp"

#include "core/sample_output.hpp"
#include "support/task_ids.hpp"

namespace userperf::core {

namespace {

constexpr std::uint64_t kNsecPerSec = 1'000'000'000;

struct ThrottleRecord {
  std::uint64_t time;
  std::uint64_t id;
  std::uint64_t stream_id;
};

void log_throttle(Event& event, const SampleData& data, bool unthrottle) {
  const ThrottleRecord body{data.time, event.primary_id.load(std::memory_order_relaxed), event.id};
  const SampleId id{data.pid, data.tid, data.time, data.cpu};
  output_sideband(event, unthrottle ? PERF_RECORD_UNTHROTTLE : PERF_RECORD_THROTTLE, 0, &body,
                  sizeof body, id);
}

// __perf_event_account_interrupt: more than max_samples_per_tick overflows in one tick stop the
// event until the next tick, logged with THROTTLE / UNTHROTTLE records. Every overflow is counted;
// only one that `can_throttle` (the kernel's `throttle`) stops the event. A throttled event
// refuses every overflow until its tick ends (perf_swevent_overflow's MAX_INTERRUPTS check; a
// throttled hardware event is stopped).
bool throttled(Event& event, const SampleData& data, ThrottleConfig& config, bool can_throttle) {
  // The tick is [tick_start, tick_start + tick_ns): a division only when a new one begins.
  if (data.time - event.tick_start.load(std::memory_order_relaxed) >= config.tick_ns) {
    event.tick_start.store(data.time - data.time % config.tick_ns, std::memory_order_relaxed);
    event.tick_interrupts.store(1, std::memory_order_relaxed);
    if (event.throttled.exchange(false, std::memory_order_relaxed)) {
      log_throttle(event, data, true);
    }
    return false;
  }
  if (event.throttled.load(std::memory_order_relaxed)) return true;
  // A plain increment, as the kernel's hwc->interrupts++: a racing or nested overflow may cost
  // one count, which moves the throttle point by one sample; a locked add on every sample would
  // cost more than the whole record copy.
  const std::uint32_t n = event.tick_interrupts.load(std::memory_order_relaxed) + 1;
  event.tick_interrupts.store(n, std::memory_order_relaxed);
  if (can_throttle && n > config.max_samples_per_tick.load(std::memory_order_relaxed)) {
    if (!event.throttled.exchange(true, std::memory_order_relaxed))
      log_throttle(event, data, false);
    return true;
  }
  return false;
}

// perf_adjust_period: move the period towards the one that gives the event's sample_freq, through
// the kernel's 1/8 low-pass filter.
void adjust_period(Event& event, std::uint64_t now, std::uint64_t count) {
  const std::uint64_t last = event.freq_stamp.exchange(now, std::memory_order_relaxed);
  const std::uint64_t freq = event.sample_freq.load(std::memory_order_relaxed);
  if (last == 0 || now <= last || freq == 0) return;
  const unsigned __int128 wanted =
      static_cast<unsigned __int128>(count) * kNsecPerSec / ((now - last) * freq);
  const std::uint64_t current = event.sample_period.load(std::memory_order_relaxed);
  std::int64_t delta = static_cast<std::int64_t>(static_cast<std::uint64_t>(wanted) - current);
  delta = (delta >= 0 ? delta + 7 : delta - 7) / 8;
  std::uint64_t period = current + static_cast<std::uint64_t>(delta);
  if (period == 0 || static_cast<std::int64_t>(period) < 0) period = 1;
  event.sample_period.store(period, std::memory_order_relaxed);
  if (event.period_left.load(std::memory_order_relaxed) > static_cast<std::int64_t>(8 * period)) {
    event.period_left.store(static_cast<std::int64_t>(period), std::memory_order_relaxed);
  }
}

}  // namespace

OverflowResult perf_event_overflow(Event& event, SampleData& data, ThrottleConfig& throttle,
                                   bool can_throttle) {
  if (event.state.load(std::memory_order_acquire) != EventState::kActive) {
    return OverflowResult::kStopped;
  }
  data.time = event.clock_now();
  // perf_prepare_sample's tid_entry: the task the overflow happened in, unless the PMU said.
  if (data.pid == 0 && data.tid == 0) {
    data.pid = static_cast<std::uint32_t>(support::current_pid());
    data.tid = static_cast<std::uint32_t>(support::current_tid());
  }
  if (throttled(event, data, throttle, can_throttle)) return OverflowResult::kThrottled;
  if (event.attr.freq) adjust_period(event, data.time, data.period);

  // The BPF program (6.10+ order): 0 skips everything below, the REFRESH count included.
  if (OverflowHandler* handler = event.handler.load(std::memory_order_acquire)) {
    if (!handler->on_overflow(event, data)) return OverflowResult::kFiltered;
  }

  // PERF_EVENT_IOC_REFRESH: the overflow that exhausts the limit is still written, then the event
  // stops.
  int limit = event.event_limit.load(std::memory_order_relaxed);
  while (limit > 0 && !event.event_limit.compare_exchange_weak(limit, limit - 1)) {
  }
  if (limit == 1) {
    event.state.store(EventState::kOff, std::memory_order_release);
  }
  return output_sample(event, data) == 0 ? OverflowResult::kWritten : OverflowResult::kDropped;
}

}  // namespace userperf::core
