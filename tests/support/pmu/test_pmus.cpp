#include "support/pmu/test_pmus.hpp"

#include "core/engine.hpp"
#include "support/pmu/test_aux_pmu.hpp"
#include "support/pmu/test_pmu.hpp"

namespace userperf::testing {

int test_pmu_type() {
  // Leaked, as the built-in PMUs are: events may outlive any scope.
  static const int type = core::Engine::instance().register_pmu(*new TestPmu());
  return type;
}

int test_aux_pmu_type() {
  static const int type = [] {
    core::Engine& engine = core::Engine::instance();
    return engine.register_pmu(*new TestAuxPmu(engine));
  }();
  return type;
}

}  // namespace userperf::testing
