/* Threads that block signals, as thread pools do (xz creates its workers with every signal
 * blocked):
 * - "pool": created while the main thread blocks every signal (pthread_sigmask, SIG_SETMASK), so it
 *   starts with all blocked; burns CPU in pool_burn; checks every mask it reads back
 * (pthread_sigmask and sigprocmask) is the one it set: all real-time signals blocked.
 * - "rawblock": blocks every signal with a raw rt_sigprocmask system call, which no wrapper sees,
 *   and burns CPU in raw_burn.
 * - main: burns CPU in main_burn with nothing blocked, and checks its mask reads back empty.
 * Prints "masks ok" and exits 0, or says which mask was wrong and exits 1. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double g_seconds = 0.4;
static volatile int g_bad;

static uint64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spins for the thread's CPU time; the clock is read once per 2^20 iterations. */
#define BURN(name)                                                        \
  __attribute__((noinline)) static uint64_t name(void) {                  \
    volatile uint64_t sink = 0;                                           \
    const uint64_t end = cpu_ns() + (uint64_t)(g_seconds * 1e9);          \
    while (cpu_ns() < end) {                                              \
      for (int i = 0; i < (1 << 20); ++i) sink = sink * 33 + (uint64_t)i; \
    }                                                                     \
    return sink;                                                          \
  }
BURN(pool_burn)
BURN(raw_burn)
BURN(main_burn)

/* Every real-time signal is `blocked` (1) or not (0) in the mask the thread reads back, through
 * both functions. */
static void check_mask(const char* who, int blocked) {
  sigset_t a, b;
  pthread_sigmask(SIG_SETMASK, NULL, &a);
  sigprocmask(SIG_SETMASK, NULL, &b);
  for (int s = SIGRTMIN; s <= SIGRTMAX; ++s) {
    if (sigismember(&a, s) != blocked || sigismember(&b, s) != blocked) {
      fprintf(stderr, "%s: signal %d reads back %s\n", who, s, blocked ? "unblocked" : "blocked");
      g_bad = 1;
      return;
    }
  }
}

static void* pool(void* arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "pool");
  check_mask("pool at start", 1);
  /* Unblock then block again, as a worker that waits for a signal would. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_UNBLOCK, &all, &old);
  check_mask("pool unblocked", 0);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  check_mask("pool blocked again", 1);
  pool_burn();
  check_mask("pool at end", 1);
  return NULL;
}

static void* rawblock(void* arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "rawblock");
  uint64_t all = ~(uint64_t)0;
  syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, sizeof all);
  raw_burn();
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) g_seconds = atof(argv[1]);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t p, r;
  if (pthread_create(&p, NULL, pool, NULL) != 0) return 2;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  check_mask("main", 0);
  /* One after the other: each burns a CPU of its own on a 2-core machine. */
  main_burn();
  pthread_join(p, NULL);
  if (pthread_create(&r, NULL, rawblock, NULL) != 0) return 2;
  pthread_join(r, NULL);
  if (g_bad) return 1;
  printf("masks ok\n");
  return 0;
}
