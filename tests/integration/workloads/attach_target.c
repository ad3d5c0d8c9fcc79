// record_attach_test.sh: a program `userperf record -p` attaches to while it runs. Its output is a
// function of its work alone, so that an attach that changed any register (general or vector),
// signal mask, stack byte or system call result shows as a different line:
//   - the main thread computes a floating-point series in main_spin, its partial sums live in
//     vector registers across every point where it can be stopped;
//   - a worker thread computes an integer hash in worker_spin, and spins on until main is done;
//   - halfway through, the main thread starts a late thread computing late_spin (record -p
//     follows threads started after the attach);
//   - a sleeper thread sleeps in nanosleep and writes a byte into a pipe after each sleep, which a
//     reader thread reads: interrupted system calls must restart, never return EINTR.
// It prints one line and exits with status 3. argv[1]: rounds (about 10 ms of work each).
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int g_rounds = 300;
static int g_pipe[2];
static volatile int g_eintr;
static unsigned long g_worker_hash;
static unsigned long g_late_hash;
static int g_bytes_read;
static volatile int g_main_done;
static volatile unsigned long g_sink;

__attribute__((noinline)) double main_spin(int round) {
  double a = 0, b = 0, c = 0, d = 0;
  for (int i = 1; i <= 400000; ++i) {
    const double x = (double)(i + round);
    a += 1.0 / x;
    b += 1.0 / (x * x);
    c += (i & 1) ? 1.0 / (2 * x - 1) : -1.0 / (2 * x - 1);
    d += a * 1e-9 - b * 1e-9;
  }
  return a + b + c + d;
}

__attribute__((noinline)) unsigned long worker_spin(unsigned long h) {
  for (int i = 0; i < 2000000; ++i) h = (h ^ (unsigned long)i) * 1099511628211ul;
  return h;
}

static void* worker(void* arg) {
  (void)arg;
  unsigned long h = 14695981039346656037ul;
  for (int r = 0; r < g_rounds; ++r) h = worker_spin(h);
  g_worker_hash = h;
  // A round here is shorter than main_spin's: the worker spins on until the main thread is done,
  // so both are on the CPU for the whole recording whatever the machine's load.
  while (!g_main_done) g_sink = worker_spin(g_sink);
  return NULL;
}

__attribute__((noinline)) unsigned long late_spin(unsigned long h) {
  for (int i = 0; i < 2000000; ++i) h = (h + (unsigned long)i) * 6364136223846793005ul;
  return h;
}

static void* late(void* arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "late");  // what the test waits for
  unsigned long h = 1;
  for (int r = 0; r < g_rounds / 2; ++r) h = late_spin(h);
  g_late_hash = h;
  return NULL;
}

static void* sleeper(void* arg) {
  (void)arg;
  const int sleeps = g_rounds / 10 + 1;
  for (int i = 0; i < sleeps; ++i) {
    struct timespec pause = {0, 20 * 1000 * 1000};
    if (nanosleep(&pause, NULL) != 0 && errno == EINTR) ++g_eintr;
    while (write(g_pipe[1], "x", 1) != 1) {
      if (errno == EINTR) ++g_eintr;
    }
  }
  close(g_pipe[1]);
  return NULL;
}

static void* reader(void* arg) {
  (void)arg;
  char c;
  ssize_t n;
  while ((n = read(g_pipe[0], &c, 1)) != 0) {
    if (n == 1) {
      ++g_bytes_read;
    } else if (errno == EINTR) {
      ++g_eintr;
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) g_rounds = atoi(argv[1]);
  if (pipe(g_pipe) != 0) return 1;
  pthread_t threads[3];
  pthread_create(&threads[0], NULL, worker, NULL);
  pthread_create(&threads[1], NULL, sleeper, NULL);
  pthread_create(&threads[2], NULL, reader, NULL);
  double sum = 0;
  pthread_t late_thread;
  for (int r = 0; r < g_rounds; ++r) {
    if (r == g_rounds / 2) pthread_create(&late_thread, NULL, late, NULL);
    sum += main_spin(r);
  }
  g_main_done = 1;
  for (int i = 0; i < 3; ++i) pthread_join(threads[i], NULL);
  pthread_join(late_thread, NULL);
  printf("sum=%.17g hash=%lx late=%lx bytes=%d eintr=%d\n", sum, g_worker_hash, g_late_hash,
         g_bytes_read, g_eintr);
  return 3;
}
