// The core-level engine under test: an engine of the core tests' own, with the test PMUs alone.
#include "support/engine_under_test.hpp"
#include "support/pmu/test_aux_pmu.hpp"
#include "support/pmu/test_pmu.hpp"

namespace userperf::testing {

namespace {

struct CoreEngine {
  core::Engine engine;
  TestPmu test;
  TestAuxPmu test_aux{engine};
  int test_type = engine.register_pmu(test);
  int test_aux_type = engine.register_pmu(test_aux);
};

// Never destroyed: events may be closed by static destructors of the tests.
CoreEngine& core_engine() {
  static auto* e = new CoreEngine();
  return *e;
}

}  // namespace

core::Engine& engine() {
  return core_engine().engine;
}
int test_pmu_type() {
  return core_engine().test_type;
}
int test_aux_pmu_type() {
  return core_engine().test_aux_type;
}

}  // namespace userperf::testing
