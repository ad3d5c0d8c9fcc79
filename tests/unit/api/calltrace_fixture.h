/* Functions compiled with -finstrument-functions (calltrace_fixture.c): a calls b, b calls c,
 * then a calls c. */
#ifndef USERPERF_TESTS_CALLTRACE_FIXTURE_H
#define USERPERF_TESTS_CALLTRACE_FIXTURE_H

#ifdef __cplusplus
extern "C" {
#endif

int calltrace_fixture_a(int x);
int calltrace_fixture_b(int x);
int calltrace_fixture_c(int x);

#ifdef __cplusplus
}
#endif

#endif
