// The PMUs every engine has: software (type PERF_TYPE_SOFTWARE), tracepoint
// (PERF_TYPE_TRACEPOINT), and with dynamic types the AUX trace sources synthetic, calltrace and
// log. The test doubles (tests/support/pmu) are not among them.
#pragma once

#include "core/engine.hpp"

namespace userperf::pmu {

// Registers the built-in PMUs with `engine`; they live as long as the process.
void register_builtin_pmus(core::Engine& engine);

}  // namespace userperf::pmu
