// The calltrace source (PMU "calltrace"): function entries and exits of one thread, reported by
// instrumentation (userperf_calltrace_enter/exit, or the userperf_calltrace_hooks library behind
// gcc/clang -finstrument-functions), stored in the calltrace format (trace/calltrace_format.hpp).
//
// Events are per thread: pid = a thread of this process (0 = the caller); one calltrace event per
// thread (a second one is EBUSY); CPU-wide events (pid -1) are EOPNOTSUPP. attr.config must be 0.
// The event's count is the number of entries stored.
#pragma once

#include <cstdint>

#include "core/aux_source_pmu.hpp"

namespace userperf::pmu {

class CalltracePmu final : public core::AuxSourcePmu {
 public:
  using core::AuxSourcePmu::AuxSourcePmu;
  const char* name() const override { return "calltrace"; }
  int event_bind(core::Event& event) override;

  struct Stats {
    std::uint64_t recorded = 0;  // entries stored
    std::uint64_t nested = 0;    // hooks that ran inside a hook on the same thread (not stored)
    std::uint64_t dropped = 0;   // entries the AUX stream refused (full, busy, nested in a copy)
  };
  Stats stats(core::Event& event) const;

  // The write path: the calling thread entered or left `function`. Costs one TLS load, one global
  // load and a branch when the thread has no calltrace event. SIGNAL-SAFE and reentrant: a hook in
  // a signal handler that interrupted a hook on the same thread is counted as nested and dropped.
  static void record(bool exit, const void* function, const void* call_site);

 protected:
  void unpublish(Source& source) override;
};

}  // namespace userperf::pmu
