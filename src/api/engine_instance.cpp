// The process-wide engine. Defined here, above pmu/, so that core/ need not know which PMUs exist.
#include "core/engine.hpp"
#include "pmu/builtin.hpp"

namespace userperf::core {

Engine& Engine::instance() {
  // Never destroyed: signal handlers may run during exit.
  static Engine* engine = [] {
    auto* e = new Engine();
    pmu::register_builtin_pmus(*e);
    return e;
  }();
  return *engine;
}

}  // namespace userperf::core
