#include "pmu/builtin.hpp"

#include "pmu/calltrace_pmu.hpp"
#include "pmu/log_pmu.hpp"
#include "pmu/software_pmu.hpp"
#include "pmu/synthetic_pmu.hpp"
#include "pmu/tracepoint_pmu.hpp"

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
