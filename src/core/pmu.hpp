// The Pmu interface: how an event source plugs into the engine (the kernel's struct pmu).
// The engine calls these with its lock held, never from the write path; a source reports
// overflows by calling Engine::overflow() (signal-safe) from wherever it runs.
#pragma once

#include <cstdint>

namespace userperf::core {

struct Event;

class Pmu {
 public:
  virtual ~Pmu() = default;
  virtual const char* name() const = 0;
  // Validates the attr for this PMU: 0, -ENOENT when the config is not one of its events, or the
  // kernel's errno for an unsupported combination.
  virtual int event_init(Event& event) = 0;
  // Attaches the event to its source once every check the kernel makes has passed. Refusals the
  // kernel has no counterpart for (what user space cannot observe) come from here, so that every
  // kernel errno keeps its precedence. destroy() undoes it.
  virtual int event_bind(Event& event) {
    (void)event;
    return 0;
  }
  // Scheduled in / out: start or stop producing counts and overflows for this event.
  virtual int add(Event& event) = 0;
  virtual void del(Event& event) = 0;
  // Brings event.count up to date (counting sources that are not pushed by the source itself).
  virtual void read(Event& event) { (void)event; }
  // A new sample period took effect (PERF_EVENT_IOC_PERIOD, frequency adaptation).
  virtual void period_changed(Event& event) { (void)event; }
  // The event is going away; release what event_init took.
  virtual void destroy(Event& event) { (void)event; }

  int type() const { return type_; }

 private:
  friend class Engine;
  int type_ = -1;
};

}  // namespace userperf::core
