// record_test.sh off-cpu-threads: pthread waits. Each round the main thread computes 20 ms
// (compute_phase), waits 10 ms on a condition variable a holder thread signals 10 ms after being
// asked (cond_phase, pthread_cond_wait) and 10 ms for a mutex the holder keeps locked for 10 ms
// (mutex_phase, pthread_mutex_lock). A joiner thread does nothing but wait in pthread_join
// (join_phase) for a thread that sleeps 300 ms: it never runs long enough for a CPU sample, so
// its off-CPU time is written only when its first off-CPU sample announces it. The holder and the
// sleeper wait and sleep with raw system calls, which the agent does not wrap: offcpu-time is
// cond 600 ms, mutex 600 ms and join 300 ms, 40/40/20.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { kRounds = 60, kPhaseNs = 10 * 1000 * 1000, kSleeperNs = 300 * 1000 * 1000 };

static int g_request[2], g_locked[2];
static pthread_mutex_t g_held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_cond_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_ready;
static volatile unsigned long g_sink;

static long long thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void raw_sleep(long ns) {
  const struct timespec pause = {ns / 1000000000L, ns % 1000000000L};
  syscall(SYS_nanosleep, &pause, NULL);
}

// 'c': signals the condition 10 ms later. 'm': locks the mutex, says so, unlocks it 10 ms later.
static void* holder(void* arg) {
  (void)arg;
  char c;
  while (syscall(SYS_read, g_request[0], &c, 1) == 1) {
    if (c == 'c') {
      raw_sleep(kPhaseNs);
      pthread_mutex_lock(&g_cond_mutex);
      g_ready = 1;
      pthread_cond_signal(&g_cond);
      pthread_mutex_unlock(&g_cond_mutex);
    } else {
      pthread_mutex_lock(&g_held);
      if (syscall(SYS_write, g_locked[1], &c, 1) != 1) break;
      raw_sleep(kPhaseNs);
      pthread_mutex_unlock(&g_held);
    }
  }
  return NULL;
}

static void* sleeper(void* arg) {
  (void)arg;
  raw_sleep(kSleeperNs);
  return NULL;
}

__attribute__((noinline)) void join_phase(pthread_t thread) {
  if (pthread_join(thread, NULL) != 0) perror("pthread_join");
}

static void* joiner(void* arg) {
  join_phase(*(pthread_t*)arg);
  return NULL;
}

__attribute__((noinline)) void compute_phase(void) {
  const long long end = thread_cpu_ns() + 2LL * kPhaseNs;
  unsigned long x = g_sink;
  while (thread_cpu_ns() < end) {
    for (int i = 0; i < 100000; ++i) x = x * 6364136223846793005UL + 1442695040888963407UL;
  }
  g_sink = x;
}

__attribute__((noinline)) void cond_phase(void) {
  pthread_mutex_lock(&g_cond_mutex);
  g_ready = 0;
  char c = 'c';
  if (syscall(SYS_write, g_request[1], &c, 1) != 1) perror("request");
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_sec += 10;
  while (!g_ready) pthread_cond_clockwait(&g_cond, &g_cond_mutex, CLOCK_MONOTONIC, &until);
  pthread_mutex_unlock(&g_cond_mutex);
}

__attribute__((noinline)) void mutex_phase(void) {
  char c = 'm';
  if (syscall(SYS_write, g_request[1], &c, 1) != 1 || syscall(SYS_read, g_locked[0], &c, 1) != 1) {
    perror("request");
  }
  pthread_mutex_lock(&g_held);
  pthread_mutex_unlock(&g_held);
}

int main(void) {
  if (pipe(g_request) != 0 || pipe(g_locked) != 0) return 1;
  pthread_t holder_thread, sleeper_thread, joiner_thread;
  if (pthread_create(&holder_thread, NULL, holder, NULL) != 0 ||
      pthread_create(&sleeper_thread, NULL, sleeper, NULL) != 0 ||
      pthread_create(&joiner_thread, NULL, joiner, &sleeper_thread) != 0) {
    return 1;
  }
  for (int round = 0; round < kRounds; ++round) {
    compute_phase();
    cond_phase();
    mutex_phase();
  }
  close(g_request[1]);
  pthread_join(holder_thread, NULL);
  pthread_join(joiner_thread, NULL);
  return 0;
}
