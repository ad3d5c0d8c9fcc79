// The Pmu interface: how an event source plugs into the engine (the kernel's struct pmu).
// The engine calls these with its lock held, never from the write path; a source reports
// overflows by calling Engine::overflow() (signal-safe) from wherever it runs.
#pragma once

#include <cstdint>

namespace userperf::ring {
class AuxRing;
class OutputHandle;
}  // namespace userperf::ring

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

  // ---- AUX area (kernel-perf-spec §4, §5): PMUs that produce trace data override these. ----
  // The kernel's pmu->setup_aux != NULL: the event's buffer may get an AUX area (else the AUX
  // mmap fails with EOPNOTSUPP).
  virtual bool has_aux() const { return false; }
  // PERF_PMU_CAP_ITRACE: the engine logs PERF_RECORD_ITRACE_START before the event's first add().
  virtual bool has_itrace() const { return false; }
  // pmu->snapshot_aux != NULL: group members may sample the trace (PERF_SAMPLE_AUX).
  virtual bool has_snapshot_aux() const { return false; }
  // rb_alloc_aux -> setup_aux: the event's buffer got an AUX area (engine lock held). Returns 0 or
  // a negative errno, with which the mmap then fails.
  virtual int setup_aux(Event& event, ring::AuxRing& aux) {
    (void)event;
    (void)aux;
    return 0;
  }
  // The AUX area goes away (its last munmap): stop writing into it (end any open handle). The
  // engine then waits for a grace period before freeing it.
  virtual void free_aux(Event& event) { (void)event; }
  // pmu->snapshot_aux: copies the newest `size` bytes of the leader's trace into h and returns the
  // bytes copied (the engine zero-fills the rest). Called with the area's byte lock held (or nested
  // in its holder on the same thread), on the write path: SIGNAL-SAFE. The default copies the
  // `size` bytes that end at the area's write position, which is right for every source that
  // stores its trace through AuxOutput.
  virtual std::uint64_t snapshot_aux(Event& leader, ring::AuxRing& aux, ring::OutputHandle& h,
                                     std::uint64_t size);

  int type() const { return type_; }

 private:
  friend class Engine;
  int type_ = -1;
};

}  // namespace userperf::core
