// The test PMUs in the process-wide engine (the C API's), for tests and benchmarks that drive
// userperf through userperf_perf_event_open: registered at the first call, never by the product
// (userperf.h lists no "test" PMU, and a recorded program's engine has none).
#pragma once

namespace userperf::testing {

int test_pmu_type();      // TestPmu, "test"
int test_aux_pmu_type();  // TestAuxPmu, "test_aux"

}  // namespace userperf::testing
