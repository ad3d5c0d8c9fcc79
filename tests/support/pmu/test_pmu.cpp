#include "support/pmu/test_pmu.hpp"

#include "core/overflow.hpp"

namespace userperf::testing {

int TestPmu::event_init(core::Event& event) {
  (void)event;
  return 0;
}

int TestPmu::add(core::Event& event) {
  (void)event;
  return 0;
}

void TestPmu::del(core::Event& event) {
  (void)event;
}

std::uint64_t TestPmu::count(core::Engine& engine, core::Event& event, std::uint64_t delta,
                             const core::SampleData& sample) {
  if (event.state.load(std::memory_order_acquire) != core::EventState::kActive) return 0;
  return core::count_and_overflow(event, delta, [&](std::uint64_t period, bool throttle) {
    core::SampleData data = sample;
    data.period = period;
    return engine.overflow(event, data, throttle);
  });
}

core::OverflowResult TestPmu::overflow(core::Engine& engine, core::Event& event,
                                       core::SampleData& sample) {
  return engine.overflow(event, sample, true);
}

}  // namespace userperf::testing
