// TestPmu ("test"): an event source that tests and benchmarks drive by hand. It accepts any config
// and produces counts and overflows exactly when told, on the calling thread. A test double: no
// engine of the product registers it (test_pmus.hpp registers it where a test or benchmark asks).
#pragma once

#include "core/engine.hpp"
#include "core/pmu.hpp"

namespace userperf::testing {

class TestPmu final : public core::Pmu {
 public:
  const char* name() const override { return "test"; }
  int event_init(core::Event& event) override;
  int add(core::Event& event) override;
  void del(core::Event& event) override;

  // Counts `delta` into the event; every period boundary crossed overflows with a copy of
  // `sample` (period filled in), as a software event does (perf_swevent_event: the first overflow
  // of a call is never throttled). Returns the number of overflows. Signal-safe.
  std::uint64_t count(core::Engine& engine, core::Event& event, std::uint64_t delta,
                      const core::SampleData& sample);
  // One overflow with exactly this sample data, as a hardware PMU's interrupt gives it
  // (perf_event_overflow: throttle = 1). Signal-safe.
  core::OverflowResult overflow(core::Engine& engine, core::Event& event, core::SampleData& sample);
};

}  // namespace userperf::testing
