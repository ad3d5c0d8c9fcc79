// The core-level engine under test: an engine of the core tests' own, with the test PMUs alone.
#include "support/engine_of_level.hpp"

namespace userperf::testing {

EngineWithTestPmus& level_engine() {
  static auto* e = new EngineWithTestPmus();
  return *e;
}

}  // namespace userperf::testing
