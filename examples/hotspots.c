/* The demo `make run` records with `userperf record -g`: a program that knows nothing of userperf
 * (it links no userperf library) with three functions that burn 50%, 30% and 20% of its CPU time.
 * Each round calls them with 5, 3 and 2 units of the same arithmetic loop, so the shares hold on
 * any machine; a profile that attributes them differently is wrong.
 *
 * Usage: hotspots [SECONDS [cpu]]   (default 1; runs whole rounds until SECONDS of wall time have
 * passed, or with "cpu" until it has used SECONDS of CPU time: on a loaded machine a profile then
 * still holds SECONDS x 1000 samples at 1 kHz, where the wall-clock bound left a CI run 45 samples,
 * too few to tell 20% from 2%. The tests that check the shares use "cpu"; the others keep the
 * wall-clock bound, which leaves less work to a loaded machine.) */
#define _POSIX_C_SOURCE 200112L /* clock_gettime and its clocks under -std=c11 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One unit of work: a dependent multiply-add chain the compiler cannot fold or vectorize. Inlined,
 * so that each caller's own code burns its share (the profile's self column names it). */
static inline __attribute__((always_inline)) uint64_t burn_units(uint64_t seed, int units) {
  uint64_t x = seed;
  for (int u = 0; u < units; ++u) {
    for (int i = 0; i < 200000; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      __asm__ volatile("" : "+r"(x));
    }
  }
  return x;
}

__attribute__((noinline)) uint64_t hot_parse(uint64_t seed) {
  return burn_units(seed, 5);
}
__attribute__((noinline)) uint64_t warm_transform(uint64_t seed) {
  return burn_units(seed, 3);
}
__attribute__((noinline)) uint64_t cool_checksum(uint64_t seed) {
  return burn_units(seed, 2);
}

static double seconds_of(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Rounds run until the wall clock (the vDSO's, no system call) reaches the end the CPU time still
 * missing would take unloaded; only then is the CPU clock (a system call) read. A system call in
 * every round would change what is profiled: under load the scheduler switches the program out at
 * such a call (EEVDF ends a used-up slice where clock_gettime of a CPU clock updates its runtime),
 * and the demo is a program of pure computation. */
__attribute__((noinline)) uint64_t run_rounds(double seconds, int cpu, int* rounds) {
  const double cpu_end = cpu ? seconds_of(CLOCK_PROCESS_CPUTIME_ID) + seconds : 0;
  double wall_end = seconds_of(CLOCK_MONOTONIC) + seconds;
  uint64_t acc = 1;
  *rounds = 0;
  for (;;) {
    acc = hot_parse(acc);
    acc = warm_transform(acc);
    acc = cool_checksum(acc);
    ++*rounds;
    const double now = seconds_of(CLOCK_MONOTONIC);
    if (now < wall_end) continue;
    if (!cpu) break;
    const double missing = cpu_end - seconds_of(CLOCK_PROCESS_CPUTIME_ID);
    if (missing <= 0) break;
    wall_end = now + missing;
  }
  return acc;
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? atof(argv[1]) : 1.0;
  const int cpu = argc > 2 && strcmp(argv[2], "cpu") == 0;
  int rounds = 0;
  const uint64_t acc = run_rounds(seconds > 0 ? seconds : 1.0, cpu, &rounds);
  printf("hotspots: %d rounds (checksum %016llx)\n", rounds, (unsigned long long)acc);
  return 0;
}
