// bench/offcpu_bench.sh's program: the cost of calls that do not block, through the name the
// program links (the agent's wrapper when it is preloaded) and through libc's own function
// (dlsym on libc.so.6), in the same process and the same run: read of a ready pipe (one byte
// written back each time), poll with timeout 0, write to a pipe; pthread_mutex_lock of a free
// mutex (with its unlock, which is not wrapped) and sem_wait of a posted semaphore (with its
// sem_post), 10 times as many. Prints ns per call for each.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef ssize_t (*ReadFn)(int, void*, size_t);
typedef ssize_t (*WriteFn)(int, const void*, size_t);
typedef int (*PollFn)(struct pollfd*, nfds_t, int);
typedef int (*LockFn)(pthread_mutex_t*);
typedef int (*SemWaitFn)(sem_t*);

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

// The best of 5 rounds of n pairs of write + read (the read measured with its write).
static double read_write_ns(ReadFn rd, WriteFn wr, int fds[2], int n) {
  double best = 1e30;
  char c = 'x';
  for (int round = 0; round < 5; ++round) {
    const double start = now_ns();
    for (int i = 0; i < n; ++i) {
      if (wr(fds[1], &c, 1) != 1 || rd(fds[0], &c, 1) != 1) abort();
    }
    const double per = (now_ns() - start) / n;
    if (per < best) best = per;
  }
  return best;
}

static double poll_ns(PollFn pl, int fd, int n) {
  double best = 1e30;
  struct pollfd p = {fd, POLLIN, 0};
  for (int round = 0; round < 5; ++round) {
    const double start = now_ns();
    for (int i = 0; i < n; ++i) {
      // EINTR: a sampling poke that arrived inside the call (docs/record.md, "Sampling": the
      // window between the ticker's look and the signal's delivery); anything else is a bug.
      if (pl(&p, 1, 0) < 0 && errno != EINTR) abort();
    }
    const double per = (now_ns() - start) / n;
    if (per < best) best = per;
  }
  return best;
}

static double lock_ns(LockFn lock, pthread_mutex_t* mutex, int n) {
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    const double start = now_ns();
    for (int i = 0; i < n; ++i) {
      if (lock(mutex) != 0) abort();
      pthread_mutex_unlock(mutex);
    }
    const double per = (now_ns() - start) / n;
    if (per < best) best = per;
  }
  return best;
}

static double sem_ns(SemWaitFn wait, sem_t* sem, int n) {
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    const double start = now_ns();
    for (int i = 0; i < n; ++i) {
      sem_post(sem);
      if (wait(sem) != 0) abort();
    }
    const double per = (now_ns() - start) / n;
    if (per < best) best = per;
  }
  return best;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 200000;
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  if (libc == NULL) return 1;
  ReadFn libc_read = (ReadFn)dlsym(libc, "read");
  WriteFn libc_write = (WriteFn)dlsym(libc, "write");
  PollFn libc_poll = (PollFn)dlsym(libc, "poll");
  LockFn libc_lock = (LockFn)dlsym(libc, "pthread_mutex_lock");
  SemWaitFn libc_sem_wait = (SemWaitFn)dlsym(libc, "sem_wait");
  int fds[2];
  if (pipe(fds) != 0) return 1;
  // Alternating, so drift in the machine's load falls on both alike.
  const double base_rw = read_write_ns(libc_read, libc_write, fds, n);
  const double wrapped_rw = read_write_ns(read, write, fds, n);
  const double base_poll = poll_ns(libc_poll, fds[0], n);
  const double wrapped_poll = poll_ns(poll, fds[0], n);
  printf("write+read (ready pipe): libc %.1f ns, linked name %.1f ns, +%.1f ns per pair\n", base_rw,
         wrapped_rw, wrapped_rw - base_rw);
  printf("poll (timeout 0):        libc %.1f ns, linked name %.1f ns, +%.1f ns per call\n",
         base_poll, wrapped_poll, wrapped_poll - base_poll);
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  const double base_lock = lock_ns(libc_lock, &mutex, 10 * n);
  const double wrapped_lock = lock_ns(pthread_mutex_lock, &mutex, 10 * n);
  printf("mutex lock+unlock (free):  libc %.1f ns, linked name %.1f ns, +%.1f ns per pair\n",
         base_lock, wrapped_lock, wrapped_lock - base_lock);
  sem_t sem;
  sem_init(&sem, 0, 0);
  const double base_sem = sem_ns(libc_sem_wait, &sem, 10 * n);
  const double wrapped_sem = sem_ns(sem_wait, &sem, 10 * n);
  printf("sem post+wait (posted):    libc %.1f ns, linked name %.1f ns, +%.1f ns per pair\n",
         base_sem, wrapped_sem, wrapped_sem - base_sem);
  return 0;
}
