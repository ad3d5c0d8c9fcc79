// The pmu-level engine under test: an engine of the pmu tests' own with the built-in PMUs
// (pmu::register_builtin_pmus, as the C API's engine has them) and the test PMUs, nothing of api.
#include "pmu/builtin.hpp"
#include "support/engine_under_test.hpp"
#include "support/pmu/test_aux_pmu.hpp"
#include "support/pmu/test_pmu.hpp"

namespace userperf::testing {

namespace {

struct PmuEngine {
  core::Engine engine;
  TestPmu test;
  TestAuxPmu test_aux{engine};
  int test_type = engine.register_pmu(test);
  int test_aux_type = engine.register_pmu(test_aux);
  PmuEngine() { pmu::register_builtin_pmus(engine); }
};

// Never destroyed: signal handlers and static destructors may still reach its events.
PmuEngine& pmu_engine() {
  static auto* e = new PmuEngine();
  return *e;
}

}  // namespace

core::Engine& engine() {
  return pmu_engine().engine;
}
int test_pmu_type() {
  return pmu_engine().test_type;
}
int test_aux_pmu_type() {
  return pmu_engine().test_aux_type;
}

}  // namespace userperf::testing
