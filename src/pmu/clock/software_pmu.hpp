// The software PMU (PERF_TYPE_SOFTWARE): cpu-clock and task-clock sample a thread on its CPU-time
// clock (a POSIX timer over it, and the ticker's pokes; clock_timer.hpp), whose signal
// handler is the overflow path; dummy and bpf-output produce no samples of their own.
#pragma once

#include "core/engine.hpp"
#include "core/pmu.hpp"

namespace userperf::pmu {

class SoftwarePmu final : public core::Pmu {
 public:
  explicit SoftwarePmu(core::Engine& engine);
  const char* name() const override { return "software"; }
  int event_init(core::Event& event) override;
  int event_bind(core::Event& event) override;
  int add(core::Event& event) override;
  void del(core::Event& event) override;
  void period_changed(core::Event& event) override;
  void destroy(core::Event& event) override;

 private:
  core::Engine& engine_;
};

}  // namespace userperf::pmu
