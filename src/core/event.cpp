#include "core/event.hpp"

#include <time.h>

namespace userperf::core {

std::uint64_t Event::clock_now() const {
  timespec ts{};
  clock_gettime(attr.use_clockid ? static_cast<clockid_t>(attr.clockid) : CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

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

}  // namespace userperf::core
