// The process-wide engine and BPF registry behind the C API. They live here, above pmu/ and bpf/,
// so that core/ need not know which PMUs exist and bpf/ need not know which engine it serves: code
// above api (the agent, the CLI, tests and benchmarks of the C API) reaches them through these.
#pragma once

namespace userperf::core {
class Engine;
}
namespace userperf::bpf {
class BpfRegistry;
}

namespace userperf::api {

// The process-wide engine with the built-in PMUs registered (never destroyed: signal handlers may
// run during exit).
core::Engine& engine();
// The BPF registry of engine(): program and map descriptors, the engine's handler resolver.
bpf::BpfRegistry& bpf_registry();

// In a fork child: a fresh engine (built-in PMUs) and BPF registry replace the inherited ones,
// which are leaked, never used again: their locks may be held by threads that do not exist in the
// child, and their rings belong to the parent. Call in the child before any other userperf call
// (the agent calls it from its fork() wrapper, after every atfork child handler has run).
void reset_after_fork();

}  // namespace userperf::api
