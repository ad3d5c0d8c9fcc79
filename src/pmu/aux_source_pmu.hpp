// What userperf's trace sources (synthetic, calltrace, log) share: each event has a Source holding
// its core::AuxStream, begun when the event is scheduled in and ended when it is scheduled out or
// its AUX area goes away. The PMUs never overflow: their output is the AUX trace, which group
// members sample with PERF_SAMPLE_AUX (has_snapshot_aux) and consumers read from the AUX area.
#pragma once

#include <memory>

#include "core/aux_output.hpp"
#include "core/engine.hpp"
#include "core/pmu.hpp"

namespace userperf::pmu {

class AuxSourcePmu : public core::Pmu {
 public:
  struct Source {
    Source(core::Event& ev, core::GracePeriod& grace) : event(ev), stream(ev, grace) {}
    virtual ~Source() = default;
    core::Event& event;
    core::AuxStream stream;
  };

  explicit AuxSourcePmu(core::Engine& engine) : engine_(engine) {}

  bool has_aux() const override { return true; }
  bool has_itrace() const override { return true; }
  bool has_snapshot_aux() const override { return true; }
  int add(core::Event& event) override;
  void del(core::Event& event) override;
  int setup_aux(core::Event& event, ring::AuxRing& aux) override;
  void free_aux(core::Event& event) override;
  // Unpublishes the source (unpublish()), waits out writers, then frees it.
  void destroy(core::Event& event) override;

  // The event's source, nullptr when the event is not this PMU's.
  Source* source_of(core::Event& event) const;

 protected:
  // event_bind() of a subclass attaches the source it built.
  void attach(core::Event& event, std::unique_ptr<Source> source);
  // Hooks around the stream's start and stop (engine lock held).
  virtual void started(Source& source) { (void)source; }
  virtual void stopping(Source& source) { (void)source; }
  virtual void new_area(Source& source) { (void)source; }
  // Removes the source from whatever table its write path finds it through.
  virtual void unpublish(Source& source) { (void)source; }

  core::Engine& engine_;
};

}  // namespace userperf::pmu
