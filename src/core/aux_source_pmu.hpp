// The Pmu side of a software AUX source (userperf's trace sources synthetic, calltrace and log, and
// the tests' test_aux), beside core::AuxStream, its write side: each event has a Source holding
// its AuxStream, begun when the event is scheduled in and ended when it is scheduled out or
// its AUX area goes away. The PMUs never overflow: their output is the AUX trace, which group
// members sample with PERF_SAMPLE_AUX (has_snapshot_aux) and consumers read from the AUX area.
#pragma once

#include <memory>

#include "core/aux_output.hpp"
#include "core/engine.hpp"
#include "core/pmu.hpp"

namespace userperf::core {

class AuxSourcePmu : public Pmu {
 public:
  struct Source {
    Source(Event& ev, GracePeriod& grace) : event(ev), stream(ev, grace) {}
    virtual ~Source() = default;
    Event& event;
    AuxStream stream;
  };

  explicit AuxSourcePmu(Engine& engine) : engine_(engine) {}

  bool has_aux() const override { return true; }
  bool has_itrace() const override { return true; }
  bool has_snapshot_aux() const override { return true; }
  // A source that takes no configuration (calltrace, log): config, config1 and config2 must be 0,
  // else EINVAL. A configured source (synthetic) checks its own.
  int event_init(Event& event) override;
  int add(Event& event) override;
  void del(Event& event) override;
  int setup_aux(Event& event, ring::AuxRing& aux) override;
  void free_aux(Event& event) override;
  // Unpublishes the source (unpublish()), waits out writers, then frees it.
  void destroy(Event& event) override;

  // The event's source, nullptr when the event is not this PMU's.
  Source* source_of(Event& event) const;

 protected:
  // event_bind() of a subclass attaches the source it built.
  void attach(Event& event, std::unique_ptr<Source> source);
  // Hooks around the stream's start and stop (engine lock held).
  virtual void started(Source& source) { (void)source; }
  virtual void stopping(Source& source) { (void)source; }
  virtual void new_area(Source& source) { (void)source; }
  // Removes the source from whatever table its write path finds it through.
  virtual void unpublish(Source& source) { (void)source; }

  Engine& engine_;
};

}  // namespace userperf::core
