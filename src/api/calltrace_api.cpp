// The calltrace C API (include/userperf/calltrace.h) over the calltrace PMU's write path.
#include "userperf/calltrace.h"

#include "pmu/aux_sources/calltrace_pmu.hpp"

extern "C" {

void userperf_calltrace_enter(void* fn, void* call_site) {
  userperf::pmu::CalltracePmu::record(false, fn, call_site);
}

void userperf_calltrace_exit(void* fn, void* call_site) {
  userperf::pmu::CalltracePmu::record(true, fn, call_site);
}

}  // extern "C"
