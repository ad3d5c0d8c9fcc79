/* userperf_calltrace_hooks: the -finstrument-functions entry points, forwarding to the calltrace
 * source through weak references. Link a program compiled with -finstrument-functions with this
 * library alone: under `userperf record --aux calltrace` the calls reach the preloaded agent's
 * calltrace source; otherwise they cost a load and a branch. A program that links userperf itself
 * (its C API library pulls the entry points in) traces its own threads' calls whenever they have
 * an enabled calltrace event. */
#include "userperf/calltrace.h"

#pragma weak userperf_calltrace_enter
#pragma weak userperf_calltrace_exit

void __cyg_profile_func_enter(void* fn, void* call_site) __attribute__((no_instrument_function));
void __cyg_profile_func_exit(void* fn, void* call_site) __attribute__((no_instrument_function));

void __cyg_profile_func_enter(void* fn, void* call_site) {
  if (userperf_calltrace_enter) userperf_calltrace_enter(fn, call_site);
}

void __cyg_profile_func_exit(void* fn, void* call_site) {
  if (userperf_calltrace_exit) userperf_calltrace_exit(fn, call_site);
}
