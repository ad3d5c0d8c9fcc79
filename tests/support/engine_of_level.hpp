// What the core and pmu levels of engine_under_test.hpp share: an engine of the level's tests'
// own with the test PMUs registered. engine_of_level.cpp defines engine(), test_pmu_type() and
// test_aux_pmu_type() over it; each level defines level_engine(), adding what the level has.
#pragma once

#include "core/engine.hpp"
#include "support/pmu/test_aux_pmu.hpp"
#include "support/pmu/test_pmu.hpp"

namespace userperf::testing {

struct EngineWithTestPmus {
  core::Engine engine;
  TestPmu test;
  TestAuxPmu test_aux{engine};
  int test_type = engine.register_pmu(test);
  int test_aux_type = engine.register_pmu(test_aux);
};

// Never destroyed: signal handlers and static destructors may still reach its events.
EngineWithTestPmus& level_engine();

}  // namespace userperf::testing
