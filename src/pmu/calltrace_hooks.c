/* userperf_calltrace_hooks: the -finstrument-functions entry points, forwarding to the calltrace
 * source. Link a program compiled with -finstrument-functions with this library (and userperf);
 * its threads' calls are then traced whenever they have an enabled calltrace event. */
#include "userperf/calltrace.h"

void __cyg_profile_func_enter(void* fn, void* call_site) __attribute__((no_instrument_function));
void __cyg_profile_func_exit(void* fn, void* call_site) __attribute__((no_instrument_function));

void __cyg_profile_func_enter(void* fn, void* call_site) {
  userperf_calltrace_enter(fn, call_site);
}

void __cyg_profile_func_exit(void* fn, void* call_site) {
  userperf_calltrace_exit(fn, call_site);
}
