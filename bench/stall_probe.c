// bench/attach_bench.sh: how long a running program is held up while a profiler attaches to it.
// Its main thread reads CLOCK_MONOTONIC in a loop for argv[1] seconds and prints the longest gap
// between two reads (the time it was stopped, or descheduled) and how many gaps exceeded 1 ms.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char** argv) {
  const long long seconds = argc > 1 ? atoll(argv[1]) : 3;
  const long long start = now_ns();
  long long last = start, longest = 0, over_ms = 0;
  while (last - start < seconds * 1000000000LL) {
    const long long t = now_ns();
    if (t - last > longest) longest = t - last;
    if (t - last > 1000000) ++over_ms;
    last = t;
  }
  printf("longest gap %.3f ms, gaps over 1 ms: %lld\n", longest / 1e6, over_ms);
  return 0;
}
