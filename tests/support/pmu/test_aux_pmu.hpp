// TestAuxPmu ("test_aux"): an AUX source that tests and benchmarks drive by hand, the AUX
// counterpart of TestPmu. Each event stores exactly the bytes it is given, on the calling thread,
// through its source's core::AuxStream (core::AuxSourcePmu: begun at add(), ended at del() and when
// its AUX area goes away). A test double, as TestPmu.
#pragma once

#include <cstddef>

#include "core/aux_source_pmu.hpp"

namespace userperf::testing {

class TestAuxPmu final : public core::AuxSourcePmu {
 public:
  explicit TestAuxPmu(core::Engine& engine) : core::AuxSourcePmu(engine) {}
  const char* name() const override { return "test_aux"; }
  int event_init(core::Event& event) override;
  int event_bind(core::Event& event) override;

  // Appends one entry to the event's trace. Signal-safe.
  core::AuxStream::Append write(core::Event& event, const void* bytes, std::size_t len);
  // Ends the current handle and begins another (publishes aux_head and a PERF_RECORD_AUX).
  void flush(core::Event& event);
};

}  // namespace userperf::testing
