/* The program agent_test.cpp records with the agent preloaded: each mode burns CPU on known
 * threads and processes and prints what it did, so the test can check both the recording and that
 * the program ran unharmed. The recorder hears of a thread at its first sample, so whatever a mode
 * wants the recorder to see from a thread (a name, a fork child inheriting its ids) comes after
 * 20 ms of its CPU: several ticks. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "userperf/tracepoint.h"

USERPERF_TRACEPOINT(agenttest, tick, (uint64_t, n))

static double thread_cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Burns `ms` of this thread's CPU time; returns a value the compiler cannot drop. */
static unsigned long spin(double ms) {
  volatile unsigned long x = 0;
  const double end = thread_cpu_ms() + ms;
  while (thread_cpu_ms() < end) {
    for (int i = 0; i < 10000; ++i) x += (unsigned long)i;
  }
  return x;
}

static void* worker(void* arg) {
  (void)arg;
  spin(20);
  pthread_setname_np(pthread_self(), "worker");
  spin(130);
  return NULL;
}

static int run_threads(void) {
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) {
    if (pthread_create(&threads[i], NULL, worker, NULL) != 0) return 1;
  }
  spin(150);
  for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
  printf("threads done\n");
  return 0;
}

static void* short_worker(void* arg) {
  (void)arg;
  spin(20);
  return NULL;
}

/* Threads that start and end at the same time: setup and teardown run concurrently. */
static int run_many(void) {
  pthread_t threads[16];
  for (int i = 0; i < 16; ++i) {
    if (pthread_create(&threads[i], NULL, short_worker, NULL) != 0) return 1;
  }
  for (int i = 0; i < 16; ++i) pthread_join(threads[i], NULL);
  printf("many done\n");
  return 0;
}

/* The parent's part of every fork mode: burns 150 ms, waits for the child and says how it ended. */
static int parent_waits(pid_t child, const char* what) {
  spin(150);
  int status = 0;
  if (waitpid(child, &status, 0) != child) return 1;
  printf("%s done %d\n", what, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}

static int run_fork(void) {
  spin(20);
  fflush(stdout);
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    spin(150);
    printf("child done\n");
    return 0;
  }
  return parent_waits(child, "fork");
}

static void* child_worker(void* arg) {
  (void)arg;
  spin(150);
  return NULL;
}

/* A fork child that starts a thread after its own first samples. */
static int run_fork_thread(void) {
  spin(20);
  fflush(stdout);
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    spin(20);
    pthread_t thread;
    if (pthread_create(&thread, NULL, child_worker, NULL) != 0) return 1;
    spin(150);
    pthread_join(thread, NULL);
    printf("child threads done\n");
    return 0;
  }
  return parent_waits(child, "fork");
}

/* A fork child that forks again at once, before its first sample. */
static int run_fork_fork(void) {
  spin(20);
  fflush(stdout);
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    const pid_t grandchild = fork();
    if (grandchild < 0) return 1;
    if (grandchild == 0) {
      spin(150);
      printf("grandchild done\n");
      return 0;
    }
    const int rc = parent_waits(grandchild, "child");
    fflush(stdout);
    return rc;
  }
  return parent_waits(child, "fork");
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "spin";
  if (strcmp(mode, "threads") == 0) return run_threads();
  if (strcmp(mode, "many") == 0) return run_many();
  if (strcmp(mode, "fork") == 0) return run_fork();
  if (strcmp(mode, "fork-thread") == 0) return run_fork_thread();
  if (strcmp(mode, "fork-fork") == 0) return run_fork_fork();
  if (strcmp(mode, "exec") == 0) {
    spin(50);
    fflush(stdout);
    execl(argv[0], argv[0], "spin", (char*)NULL);
    return 1;
  }
  if (strcmp(mode, "tracepoint") == 0) {
    for (uint64_t n = 0; n < 100; ++n) userperf_trace(agenttest, tick, n);
    printf("tracepoint %s\n", userperf_trace_enabled(agenttest, tick) ? "enabled" : "disabled");
    return 0;
  }
  if (strcmp(mode, "quick") == 0) { /* ends before its first sample */
    printf("quick done\n");
    return 0;
  }
  if (strcmp(mode, "dlopen") == 0) {
    spin(20);
    void* handle = dlopen("libm.so.6", RTLD_NOW);
    prctl(PR_SET_NAME, "renamed", 0, 0, 0);
    printf("dlopen %s\n", handle != NULL ? "ok" : "failed");
    return handle != NULL ? 0 : 1;
  }
  spin(150);
  printf("spin done\n");
  return 0;
}
