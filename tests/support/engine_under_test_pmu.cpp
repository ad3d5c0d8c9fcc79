// The pmu-level engine under test: an engine of the pmu tests' own with the built-in PMUs
// (pmu::register_builtin_pmus, as the C API's engine has them) and the test PMUs, nothing of api.
#include "pmu/builtin.hpp"
#include "support/engine_of_level.hpp"

namespace userperf::testing {

EngineWithTestPmus& level_engine() {
  static auto* e = [] {
    auto* with_builtins = new EngineWithTestPmus();
    pmu::register_builtin_pmus(with_builtins->engine);
    return with_builtins;
  }();
  return *e;
}

}  // namespace userperf::testing
