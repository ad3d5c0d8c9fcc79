/* A program compiled with -finstrument-functions and linked with userperf_calltrace_hooks only (no
 * userperf library): under `userperf record --aux calltrace` its calls reach the agent's calltrace
 * source, and each sample carries the newest calls - traced_outer -> traced_middle -> traced_leaf.
 * Usage: traced [SECONDS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_seconds(void) __attribute__((no_instrument_function));
static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) uint64_t traced_leaf(uint64_t x) {
  for (int i = 0; i < 2000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    __asm__ volatile("" : "+r"(x));
  }
  return x;
}

__attribute__((noinline)) uint64_t traced_middle(uint64_t x) {
  return traced_leaf(traced_leaf(x));
}

__attribute__((noinline)) uint64_t traced_outer(uint64_t x) {
  return traced_middle(x) ^ 1;
}

int main(int argc, char** argv) {
  const double end = cpu_seconds() + (argc > 1 ? atof(argv[1]) : 0.5);
  uint64_t x = 1;
  while (cpu_seconds() < end) x = traced_outer(x);
  printf("traced: %llx\n", (unsigned long long)x);
  return 0;
}
