// The PMUs every engine has: software (type PERF_TYPE_SOFTWARE), and with dynamic types test and
// test_aux (driven by tests and benchmarks) and the AUX trace sources synthetic, calltrace, log.
#pragma once

#include "core/engine.hpp"
#include "pmu/test_pmu.hpp"

namespace userperf::pmu {

// Registers the built-in PMUs with `engine`; the returned TestPmu lives as long as the process.
TestPmu& register_builtin_pmus(core::Engine& engine);

}  // namespace userperf::pmu
