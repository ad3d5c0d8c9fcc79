/* A program that writes its own log through userperf/log.h and links no userperf library: under
 * `userperf record --aux log` its records reach the agent's log event of the writing thread, and
 * each sample carries that thread's newest records. Two threads, each logging "THREAD step N"
 * before every step of work, so a sample's window names its own thread's latest steps.
 * Usage: logged [SECONDS]  (CPU seconds per thread; prints how many records were refused) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "userperf/log.h"

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t logged_step(uint64_t x) {
  for (int i = 0; i < 20000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    __asm__ volatile("" : "+r"(x));
  }
  return x;
}

struct worker {
  const char* name;
  double seconds;
  long refused;  // records userperf_log_thread did not take (ENOTCONN without the recorder)
  uint64_t x;
};

static void* run(void* arg) {
  struct worker* w = arg;
  const double end = cpu_seconds() + w->seconds;
  char text[64];
  for (long step = 0; cpu_seconds() < end; ++step) {
    const int n = snprintf(text, sizeof text, "%s step %ld", w->name, step);
    if (userperf_log_thread(text, (size_t)n) != 0) ++w->refused;
    w->x = logged_step(w->x + (uint64_t)step);
  }
  return NULL;
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? atof(argv[1]) : 0.5;
  struct worker workers[2] = {{"main", seconds, 0, 1}, {"second", seconds, 0, 2}};
  pthread_t second;
  if (pthread_create(&second, NULL, run, &workers[1]) != 0) return 1;
  run(&workers[0]);
  pthread_join(second, NULL);
  printf("logged: refused %ld %ld (%llx)\n", workers[0].refused, workers[1].refused,
         (unsigned long long)(workers[0].x ^ workers[1].x));
  return 0;
}
