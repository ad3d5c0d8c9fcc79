// record_test.sh off-cpu: the main thread spends each round 20 ms computing (compute_phase), 10 ms
// in nanosleep (sleep_phase) and 10 ms blocked reading a pipe (pipe_phase) that a feeder thread
// writes 10 ms after being asked. The feeder waits and writes with raw system calls, which the
// agent does not wrap: the only off-CPU time recorded is the main thread's, 50/50 between the two
// call sites, and the main thread's CPU time equals its blocked time.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { kRounds = 60, kPhaseNs = 10 * 1000 * 1000 };

static int g_request[2], g_data[2];
static volatile unsigned long g_sink;

static long long thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void* feeder(void* arg) {
  (void)arg;
  char c;
  const struct timespec pause = {0, kPhaseNs};
  while (syscall(SYS_read, g_request[0], &c, 1) == 1) {
    syscall(SYS_nanosleep, &pause, NULL);
    if (syscall(SYS_write, g_data[1], &c, 1) != 1) break;
  }
  return NULL;
}

__attribute__((noinline)) void compute_phase(void) {
  const long long end = thread_cpu_ns() + 2LL * kPhaseNs;
  unsigned long x = g_sink;  // checked between long runs: reading the clock is a system call
  while (thread_cpu_ns() < end) {
    for (int i = 0; i < 100000; ++i) x = x * 6364136223846793005UL + 1442695040888963407UL;
  }
  g_sink = x;
}

__attribute__((noinline)) void sleep_phase(void) {
  const struct timespec pause = {0, kPhaseNs};
  if (nanosleep(&pause, NULL) != 0) perror("nanosleep");
}

__attribute__((noinline)) void pipe_phase(void) {
  char c = 'x';
  if (write(g_request[1], &c, 1) != 1 || read(g_data[0], &c, 1) != 1) perror("pipe");
}

int main(void) {
  if (pipe(g_request) != 0 || pipe(g_data) != 0) return 1;
  pthread_t thread;
  if (pthread_create(&thread, NULL, feeder, NULL) != 0) return 1;
  for (int round = 0; round < kRounds; ++round) {
    compute_phase();
    sleep_phase();
    pipe_phase();
  }
  close(g_request[1]);
  pthread_join(thread, NULL);
  return 0;
}
