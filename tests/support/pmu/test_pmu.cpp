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
  return core::count_and_overflow(event, delta, [&](std::uint64_t period) {
    core::SampleData data = sample;
    data.period = period;
    engine.overflow(event, data);
  });
}

core::OverflowResult TestPmu::overflow(core::Engine& engine, core::Event& event,
                                       core::SampleData& sample) {
  return engine.overflow(event, sample);
}

}  // namespace userperf::testing
