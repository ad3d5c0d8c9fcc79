// TestAuxPmu ("test_aux"): an AUX source that tests drive by hand, the AUX counterpart of TestPmu.
// Each event stores exactly the bytes it is given, on the calling thread, through a core::AuxStream
// (begun at add(), ended at del() and when its AUX area goes away).
#pragma once

#include <cstddef>

#include "core/aux_output.hpp"
#include "core/engine.hpp"
#include "core/pmu.hpp"

namespace userperf::pmu {

class TestAuxPmu final : public core::Pmu {
 public:
  explicit TestAuxPmu(core::Engine& engine) : engine_(engine) {}
  const char* name() const override { return "test_aux"; }
  int event_init(core::Event& event) override;
  int event_bind(core::Event& event) override;
  int add(core::Event& event) override;
  void del(core::Event& event) override;
  void destroy(core::Event& event) override;
  bool has_aux() const override { return true; }
  bool has_itrace() const override { return true; }
  bool has_snapshot_aux() const override { return true; }
  void free_aux(core::Event& event) override;

  // Appends one entry to the event's trace. Signal-safe.
  core::AuxStream::Append write(core::Event& event, const void* bytes, std::size_t len);
  // Ends the current handle and begins another (publishes aux_head and a PERF_RECORD_AUX).
  void flush(core::Event& event);
  static core::AuxStream& stream(core::Event& event);

 private:
  core::Engine& engine_;
};

}  // namespace userperf::pmu
