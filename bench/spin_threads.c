/* The CPU-bound workload of bench/record_bench.sh: THREADS threads (the main thread included) each
 * burn SECONDS of their own CPU time, so a profiler at R Hz should deliver THREADS x SECONDS x R
 * samples. Usage: spin_threads THREADS SECONDS */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds_each;

static double thread_cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) uint64_t spin(void) {
  const double end = thread_cpu() + seconds_each;
  uint64_t x = 1;
  do {
    for (int i = 0; i < 100000; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      __asm__ volatile("" : "+r"(x));
    }
  } while (thread_cpu() < end);
  return x;
}

static void* run(void* arg) {
  (void)arg;
  return (void*)(uintptr_t)spin();
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 1;
  seconds_each = argc > 2 ? atof(argv[2]) : 2.0;
  if (threads < 1 || threads > 64 || seconds_each <= 0) {
    fprintf(stderr, "usage: spin_threads THREADS(1-64) SECONDS\n");
    return 2;
  }
  pthread_t tids[64];
  for (int i = 1; i < threads; ++i) pthread_create(&tids[i], NULL, run, NULL);
  uint64_t acc = spin();
  for (int i = 1; i < threads; ++i) {
    void* r;
    pthread_join(tids[i], &r);
    acc ^= (uint64_t)(uintptr_t)r;
  }
  printf("spin_threads: %d x %.2f s (%llx)\n", threads, seconds_each, (unsigned long long)acc);
  return 0;
}
