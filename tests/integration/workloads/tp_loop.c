/* Fires user tracepoints in a tight loop: under `userperf record -e loop:tick` every hit must be
 * either a sample or counted lost (record_test.sh tracepoint-accounting).
 * Usage: tp_loop COUNT [THREADS]  (each of THREADS threads fires loop:tick COUNT times; the main
 * thread then fires loop:done once per thread it joined) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "userperf/tracepoint.h"

USERPERF_TRACEPOINT(loop, tick, (uint64_t, n))
USERPERF_TRACEPOINT(loop, done, (uint64_t, fired))

static uint64_t g_count;

static void* fire_all(void* arg) {
  (void)arg;
  for (uint64_t i = 0; i < g_count; ++i) userperf_trace(loop, tick, i);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: tp_loop COUNT [THREADS]\n");
    return 2;
  }
  g_count = strtoull(argv[1], NULL, 10);
  const int threads = argc > 2 ? atoi(argv[2]) : 1;
  if (threads < 1 || threads > 64) return 2;
  if (threads == 1) {
    fire_all(NULL);
    userperf_trace(loop, done, g_count);
    return 0;
  }
  pthread_t ids[64];
  for (int i = 0; i < threads; ++i) {
    if (pthread_create(&ids[i], NULL, fire_all, NULL) != 0) return 1;
  }
  for (int i = 0; i < threads; ++i) {
    pthread_join(ids[i], NULL);
    userperf_trace(loop, done, g_count);
  }
  return 0;
}
