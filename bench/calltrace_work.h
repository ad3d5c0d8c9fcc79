/* The calltrace benchmark's work: a loop that calls a small leaf function n times. calltrace_work.c
 * is compiled twice (bench/CMakeLists.txt): with -finstrument-functions, as
 * calltrace_work_instrumented, and without, as calltrace_work_plain. */
#ifndef USERPERF_BENCH_CALLTRACE_WORK_H
#define USERPERF_BENCH_CALLTRACE_WORK_H

#ifdef __cplusplus
extern "C" {
#endif

unsigned long calltrace_work_instrumented(unsigned long n);
unsigned long calltrace_work_plain(unsigned long n);

#ifdef __cplusplus
}
#endif

#endif
