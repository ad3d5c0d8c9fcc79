/* Many short-lived tasks (record_test.sh many-processes, many-threads).
 * - processes N MS: forks N children, at most 4 alive at a time; each burns MS ms of CPU in
 *   child_burn and exits with exit(); every third one execs this program as "exec MS" first,
 *   which burns MS ms in exec_burn. Prints "children N execs E cpu_ms T user_ms U" (T: the
 *   children's CPU time, from wait4; U: its user-mode part) and exits 0, or 1 when one failed.
 * - threads N MS: starts N threads, at most 50 alive at a time, each burns MS ms of CPU in
 *   thread_burn and returns. Prints "threads N cpu_ms T" (T: the threads' CPU time, each measured
 *   by itself) and exits 0. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static uint64_t cpu_ns(void) {
  return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* Burns MS ms of the thread's CPU time in user code. The thread's CPU clock is a system call (the
 * vDSO serves only the wall clocks), and read every few microseconds it put 16-18% of the time in
 * the kernel on a paravirtualized guest, where exclude_kernel sampling cannot see it: it is read
 * only when the wall clock (the vDSO's) says the time may be used up. */
#define BURN(name)                                                        \
  __attribute__((noinline)) static uint64_t name(double ms) {             \
    volatile uint64_t sink = 0;                                           \
    const uint64_t cpu_end = cpu_ns() + (uint64_t)(ms * 1e6);             \
    uint64_t wall_end = clock_ns(CLOCK_MONOTONIC) + (uint64_t)(ms * 1e6); \
    for (;;) {                                                            \
      for (int i = 0; i < 4096; ++i) sink = sink * 33 + (uint64_t)i;      \
      const uint64_t now = clock_ns(CLOCK_MONOTONIC);                     \
      if (now < wall_end) continue;                                       \
      const uint64_t cpu = cpu_ns();                                      \
      if (cpu >= cpu_end) break;                                          \
      wall_end = now + (cpu_end - cpu);                                   \
    }                                                                     \
    return sink;                                                          \
  }
BURN(child_burn)
BURN(exec_burn)
BURN(thread_burn)

static double g_ms;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_done = PTHREAD_COND_INITIALIZER;
static int g_alive;
static uint64_t g_thread_ns;

static void* thread_main(void* arg) {
  (void)arg;
  const uint64_t start = cpu_ns();
  thread_burn(g_ms);
  const uint64_t used = cpu_ns() - start;
  pthread_mutex_lock(&g_lock);
  g_thread_ns += used;
  --g_alive;
  pthread_cond_signal(&g_done);
  pthread_mutex_unlock(&g_lock);
  return NULL;
}

static int run_threads(int n) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  for (int i = 0; i < n; ++i) {
    pthread_mutex_lock(&g_lock);
    while (g_alive >= 50) pthread_cond_wait(&g_done, &g_lock);
    ++g_alive;
    pthread_mutex_unlock(&g_lock);
    pthread_t t;
    if (pthread_create(&t, &attr, thread_main, NULL) != 0) {
      perror("pthread_create");
      return 1;
    }
  }
  pthread_mutex_lock(&g_lock);
  while (g_alive > 0) pthread_cond_wait(&g_done, &g_lock);
  pthread_mutex_unlock(&g_lock);
  printf("threads %d cpu_ms %llu\n", n, (unsigned long long)(g_thread_ns / 1000000));
  return 0;
}

static int run_processes(const char* self, int n) {
  int alive = 0, execs = 0, failed = 0;
  uint64_t child_us = 0, child_user_us = 0;
  char ms_arg[32];
  snprintf(ms_arg, sizeof ms_arg, "%g", g_ms);
  for (int i = 0; i < n || alive > 0;) {
    if (i < n && alive < 4) {
      const int exec_it = i % 3 == 2;
      execs += exec_it;
      const pid_t pid = fork();
      if (pid < 0) {
        perror("fork");
        return 1;
      }
      if (pid == 0) {
        if (exec_it) {
          execl(self, self, "exec", ms_arg, (char*)NULL);
          _exit(127);
        }
        child_burn(g_ms);
        exit(0);
      }
      ++alive;
      ++i;
      continue;
    }
    int status;
    struct rusage usage;
    if (wait4(-1, &status, 0, &usage) <= 0) {
      perror("wait4");
      return 1;
    }
    --alive;
    const uint64_t user_us =
        (uint64_t)usage.ru_utime.tv_sec * 1000000u + (uint64_t)usage.ru_utime.tv_usec;
    child_user_us += user_us;
    child_us +=
        user_us + (uint64_t)usage.ru_stime.tv_sec * 1000000u + (uint64_t)usage.ru_stime.tv_usec;
    failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  }
  printf("children %d execs %d cpu_ms %llu user_ms %llu\n", n, execs,
         (unsigned long long)(child_us / 1000), (unsigned long long)(child_user_us / 1000));
  return failed;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s processes|threads|exec N MS\n", argv[0]);
    return 2;
  }
  if (strcmp(argv[1], "exec") == 0) {
    exec_burn(atof(argv[2]));
    return 0;
  }
  if (argc < 4) return 2;
  g_ms = atof(argv[3]);
  const int n = atoi(argv[2]);
  return strcmp(argv[1], "threads") == 0 ? run_threads(n) : run_processes(argv[0], n);
}
