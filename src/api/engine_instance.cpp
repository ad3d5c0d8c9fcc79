// The process-wide engine and BPF registry. Defined here, above pmu/ and bpf/, so that core/ need
// not know which PMUs exist and bpf/ need not know which engine it serves.
#include "bpf/perf/bpf_registry.hpp"
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

namespace userperf::bpf {

BpfRegistry& BpfRegistry::instance() {
  static auto* registry = new BpfRegistry(core::Engine::instance());
  return *registry;
}

}  // namespace userperf::bpf
