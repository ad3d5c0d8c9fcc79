#include "pmu/builtin.hpp"

#include "pmu/aux_sources/calltrace_pmu.hpp"
#include "pmu/aux_sources/log_pmu.hpp"
#include "pmu/aux_sources/synthetic_pmu.hpp"
#include "pmu/clock/software_pmu.hpp"
#include "pmu/tracepoint/tracepoint_pmu.hpp"

namespace userperf::pmu {

void register_builtin_pmus(core::Engine& engine) {
  // Leaked on purpose: PMUs outlive every event, including those closed at exit.
  engine.register_pmu(*new SoftwarePmu(engine), PERF_TYPE_SOFTWARE);
  engine.register_pmu(*new SyntheticPmu(engine));
  engine.register_pmu(*new CalltracePmu(engine));
  engine.register_pmu(*new LogPmu(engine));
  engine.register_pmu(*new TracepointPmu(engine), PERF_TYPE_TRACEPOINT);
}

}  // namespace userperf::pmu
