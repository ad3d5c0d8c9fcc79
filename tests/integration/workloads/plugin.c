/* A shared object the dlopen workload loads after the recording started: its function must be
 * named in the profile, which needs the MMAP2 the recorder writes for objects loaded late. */
#include <stdint.h>
#include <time.h>

__attribute__((noinline)) uint64_t plugin_work(double seconds) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  const double end = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + seconds;
  uint64_t x = 7;
  for (;;) {
    for (int i = 0; i < 100000; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      __asm__ volatile("" : "+r"(x));
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    if ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9 >= end) return x;
  }
}
