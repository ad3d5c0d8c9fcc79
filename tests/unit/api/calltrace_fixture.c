/* The calltrace PMU test's traced code: compiled with -finstrument-functions, so each function
 * reports its entry and exit through the userperf_calltrace_hooks library. */
#include "calltrace_fixture.h"

static volatile int g_sink;

__attribute__((noinline)) int calltrace_fixture_c(int x) {
  g_sink = x;
  return x + 3;
}

__attribute__((noinline)) int calltrace_fixture_b(int x) {
  return calltrace_fixture_c(x + 1) * 2;
}

__attribute__((noinline)) int calltrace_fixture_a(int x) {
  return calltrace_fixture_b(x) + calltrace_fixture_c(x);
}
