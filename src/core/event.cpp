#include "core/event.hpp"

#include <time.h>

#include "support/tsc_clock.hpp"

namespace userperf::core {

// The default clock and CLOCK_MONOTONIC read the TSC clock (one rdtsc and a multiply where the
// TSC is invariant, clock_gettime elsewhere); the other clockids read clock_gettime.
void Event::read_times(std::uint64_t now, std::uint64_t& enabled, std::uint64_t& running) const {
  const EventState s = state.load(std::memory_order_acquire);
  enabled = total_enabled.load(std::memory_order_relaxed);
  running = total_running.load(std::memory_order_relaxed);
  if (s >= EventState::kInactive) {
    const std::uint64_t since = enabled_since.load(std::memory_order_relaxed);
    if (now > since) enabled += now - since;
  }
  if (s == EventState::kActive) {
    const std::uint64_t since = running_since.load(std::memory_order_relaxed);
    if (now > since) running += now - since;
  }
}

void Event::attach_sibling(Event& sibling) {
  sibling.leader.store(this, std::memory_order_release);
  Event* last = siblings.empty() ? nullptr : siblings.back();
  siblings.push_back(&sibling);
  (last == nullptr ? first_sibling : last->next_sibling).store(&sibling, std::memory_order_release);
  nr_members.fetch_add(1);
}

}  // namespace userperf::core
