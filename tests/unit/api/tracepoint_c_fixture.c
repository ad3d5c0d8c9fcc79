/* User tracepoints defined and fired from C11 (tracepoint_c_test.cpp compiles this file with the
 * system C compiler into a shared object and loads it with dlopen, as a program's plugin would
 * be: its constructor registers the descriptors late, through the weak references). */
#include <stdbool.h>
#include <stdint.h>

#include "userperf/tracepoint.h"

USERPERF_TRACEPOINT(ctest, request, (uint64_t, id), (const char*, path), (int32_t, status))
/* Eight fields (the most the macros take), every C spelling of a kind. */
USERPERF_TRACEPOINT(ctest, kinds, (bool, flag), (signed char, s8v), (unsigned short, u16v),
                    (short, s16v), (unsigned long, ul), (long long, ll), (char*, text),
                    (userperf_bytes, blob))

struct userperf_tracepoint* ctest_request_descriptor(void) {
  return &userperf_tp_ctest_request;
}

struct userperf_tracepoint* ctest_kinds_descriptor(void) {
  return &userperf_tp_ctest_kinds;
}

int ctest_request_enabled(void) {
  return userperf_trace_enabled(ctest, request);
}

void ctest_fire_request(uint64_t id, const char* path, int32_t status) {
  userperf_trace(ctest, request, id, path, status);
}

void ctest_fire_kinds(void) {
  static const uint8_t bytes[] = {0xde, 0xad};
  char text[] = "t";
  userperf_bytes blob = {bytes, sizeof bytes};
  userperf_trace(ctest, kinds, true, -2, 65535, -3, 7ul, -4ll, text, blob);
}
