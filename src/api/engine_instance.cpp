// The process-wide engine and BPF registry (engine_instance.hpp).

#include <atomic>

#include "api/engine_instance.hpp"
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

namespace api {

core::Engine& engine() {
  if (core::Engine* child = g_child_engine.load(std::memory_order_acquire)) return *child;
  static core::Engine* first = make_engine();
  return *first;
}

bpf::BpfRegistry& bpf_registry() {
  if (bpf::BpfRegistry* child = g_child_registry.load(std::memory_order_acquire)) return *child;
  static auto* first = new bpf::BpfRegistry(engine());
  return *first;
}

void reset_after_fork() {
  core::Engine* engine = make_engine();
  g_child_engine.store(engine, std::memory_order_release);
  g_child_registry.store(new bpf::BpfRegistry(*engine), std::memory_order_release);
}

}  // namespace api
}  // namespace userperf
