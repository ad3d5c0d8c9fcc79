// engine_under_test.hpp's engine and test PMU types at the core and pmu levels
// (engine_of_level.hpp).
#include "support/engine_of_level.hpp"

#include "support/engine_under_test.hpp"

namespace userperf::testing {

core::Engine& engine() {
  return level_engine().engine;
}
int test_pmu_type() {
  return level_engine().test_type;
}
int test_aux_pmu_type() {
  return level_engine().test_aux_type;
}

}  // namespace userperf::testing
