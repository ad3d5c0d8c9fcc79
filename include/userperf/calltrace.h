/* userperf calltrace: function entries and exits of the calling thread, stored in the AUX area of
 * the thread's "calltrace" event (open it with type userperf_pmu_type("calltrace"), pid 0 or a
 * thread of this process, and map its AUX area).
 *
 * Programs compiled with -finstrument-functions and linked with the userperf_calltrace_hooks
 * library call these from __cyg_profile_func_enter/exit; others may call them by hand. They cost
 * one TLS load, one global load and a branch on a thread without a calltrace event, are
 * async-signal-safe, and drop (and count) a call made by a signal handler that interrupted a call
 * on the same thread. */
#ifndef USERPERF_CALLTRACE_H
#define USERPERF_CALLTRACE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The calling thread entered `fn`, called from `call_site` (NULL when unknown). */
void userperf_calltrace_enter(void* fn, void* call_site) __attribute__((no_instrument_function));
/* The calling thread returns from `fn` (the call site is the enter's; it is not stored). */
void userperf_calltrace_exit(void* fn, void* call_site) __attribute__((no_instrument_function));

#ifdef __cplusplus
}
#endif

#endif /* USERPERF_CALLTRACE_H */
