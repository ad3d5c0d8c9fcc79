// Engine's event states: enable, disable and schedule move an event and its group between them,
// account time_enabled/time_running, and mirror the times in the control page (the kernel's
// event_sched_in/out, __perf_event_enable/disable, perf_event_update_userpage).
#include "core/engine.hpp"

namespace userperf::core {

// Event states: OFF (disabled), INACTIVE (enabled, its group leader is not running), ACTIVE.
void Engine::schedule(Event& event, std::uint64_t now) {
  const Event& leader = *event.leader.load();
  const bool runnable = event.state.load() >= EventState::kInactive &&
                        (event.is_leader() || leader.state.load() == EventState::kActive);
  const bool active = event.state.load() == EventState::kActive;
  if (runnable && !active) {
    event.running_since.store(now);
    if (event.pmu->has_itrace()) log_itrace_start(event);
    event.state.store(EventState::kActive, std::memory_order_release);
    if (event.pmu->add(event) != 0) {
      event.state.store(EventState::kError);
      return;
    }
  } else if (!runnable && active) {
    event.state.store(EventState::kInactive, std::memory_order_release);
    event.pmu->del(event);
    event.total_running.fetch_add(now - event.running_since.load());
  }
  if (event.is_leader()) {
    for (Event* sibling : event.siblings) schedule(*sibling, now);
  }
}

void Engine::enable(Event& event) {
  if (event.state.load() >= EventState::kInactive) return;
  const std::uint64_t now = event.clock_now();
  event.enabled_since.store(now);
  event.state.store(EventState::kInactive);
  schedule(event, now);
  update_user_page(event);
}

void Engine::disable(Event& event) {
  if (event.state.load() < EventState::kInactive) return;
  const std::uint64_t now = event.clock_now();
  std::uint64_t enabled = 0;
  std::uint64_t running = 0;
  event.read_times(now, enabled, running);
  if (event.state.load() == EventState::kActive) event.pmu->del(event);
  event.state.store(EventState::kOff, std::memory_order_release);
  event.total_enabled.store(enabled);
  event.total_running.store(running);
  if (event.is_leader()) {
    for (Event* sibling : event.siblings) schedule(*sibling, now);
  }
  update_user_page(event);
}

void Engine::update_user_page(Event& event) {
  if (event.buffer == nullptr || event.buffer->owner != &event) return;
  event.pmu->read(event);
  ring::UserPageTimes times;
  times.now = event.clock_now();
  event.read_times(times.now, times.time_enabled, times.time_running);
  times.offset = static_cast<std::int64_t>(event.count.load());
  // arch_perf_update_userpage: the conversion when the event's clock is the TSC clock's, and
  // time_zero only without use_clockid (records then carry the TSC clock's TIME).
  if (event.uses_tsc_clock()) {
    times.clock =
        event.attr.use_clockid ? ring::UserPageClock::kTime : ring::UserPageClock::kTimeAndZero;
  }
  event.buffer->ring->update_user_page(times);
}

}  // namespace userperf::core
