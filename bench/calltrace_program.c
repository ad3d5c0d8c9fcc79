/* The program of bench/calltrace_vs_uftrace.sh: `calltrace_program [REPS]` calls the leaf loop of
 * calltrace_work.c REPS times (600 by default: 600 x 1000 leaf calls + 600 calls of the loop +
 * main, 600,601 instrumented calls), then prints the number of instrumented calls and the time the
 * loop took (CLOCK_MONOTONIC), so that a tracer's start-up and its writing after the loop do not
 * count. Built three times from the same sources (bench/CMakeLists.txt): plain, -pg (uftrace) and
 * -finstrument-functions with the userperf calltrace hooks (userperf record --aux calltrace). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

unsigned long calltrace_work_program(unsigned long n);

enum { kLeafCalls = 1000 };

static unsigned long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char** argv) {
  const unsigned long reps = argc > 1 ? strtoul(argv[1], NULL, 10) : 600;
  unsigned long sum = 0;
  const unsigned long long start = now_ns();
  for (unsigned long r = 0; r < reps; ++r) sum += calltrace_work_program(kLeafCalls);
  const unsigned long long elapsed = now_ns() - start;
  printf("calls %lu loop_ns %llu sum %lu\n", reps * (kLeafCalls + 1) + 1, elapsed, sum);
  return 0;
}
