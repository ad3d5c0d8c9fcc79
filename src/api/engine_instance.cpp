// The process-wide engine and BPF registry. Defined here, above pmu/ and bpf/, so that core/ need
// not know which PMUs exist and bpf/ need not know which engine it serves.
#include "api/engine_instance.hpp"

#include <atomic>

#include "bpf/perf/bpf_registry.hpp"
#include "core/engine.hpp"
#include "pmu/builtin.hpp"

namespace userperf {
namespace {

core::Engine* make_engine() {
  auto* e = new core::Engine();
  pmu::register_builtin_pmus(*e);
  return e;
}

// Set in a fork child: replaces the first instances (whose guarded statics are never touched
// again there, so a guard a vanished thread held cannot block the child).
std::atomic<core::Engine*> g_child_engine{nullptr};
std::atomic<bpf::BpfRegistry*> g_child_registry{nullptr};

}  // namespace

namespace core {

Engine& Engine::instance() {
  if (Engine* child = g_child_engine.load(std::memory_order_acquire)) return *child;
  // Never destroyed: signal handlers may run during exit.
  static Engine* engine = make_engine();
  return *engine;
}

}  // namespace core

namespace bpf {

BpfRegistry& BpfRegistry::instance() {
  if (BpfRegistry* child = g_child_registry.load(std::memory_order_acquire)) return *child;
  static auto* registry = new BpfRegistry(core::Engine::instance());
  return *registry;
}

}  // namespace bpf

namespace api {

void reset_after_fork() {
  core::Engine* engine = make_engine();
  g_child_engine.store(engine, std::memory_order_release);
  g_child_registry.store(new bpf::BpfRegistry(*engine), std::memory_order_release);
}

}  // namespace api
}  // namespace userperf
