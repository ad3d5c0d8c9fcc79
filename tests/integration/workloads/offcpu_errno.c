// record_test.sh off-cpu-errno: the results and errno of wrapped blocking calls, printed one per
// line, which must be the same bare and under `userperf record --off-cpu`: a read blocked while a
// SA_RESTART handler runs (restarted, returns the byte), the same without SA_RESTART (EINTR), a
// bad descriptor (EBADF), a bad sleep (EINVAL), and errno left untouched by calls that succeed
// after blocking (the off-CPU sample is written between the call's return and the wrapper's).
// Then the pthread and semaphore waits and the masked descriptor waits: each blocks 30 ms or
// fails, its result (pthread functions return an error code) and errno printed, errno set to a
// marker before each call so that a wrapper writing it shows.
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static int g_pipe[2];
static pthread_t g_main;
static volatile sig_atomic_t g_handled;

static void on_usr1(int signo) {
  (void)signo;
  ++g_handled;
}

static void pause_ms(int ms) {
  const struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

// Signals the main thread while it is blocked in read, then feeds it one byte.
static void* interrupter(void* arg) {
  (void)arg;
  pause_ms(30);
  pthread_kill(g_main, SIGUSR1);
  pause_ms(30);
  if (write(g_pipe[1], "x", 1) != 1) return NULL;
  return NULL;
}

static void blocked_read(int flags, const char* label) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sa.sa_flags = flags;
  sigaction(SIGUSR1, &sa, NULL);
  g_handled = 0;
  pthread_t thread;
  pthread_create(&thread, NULL, interrupter, NULL);
  char c = 0;
  errno = 0;
  const ssize_t n = read(g_pipe[0], &c, 1);
  const int err = errno;
  pthread_join(thread, NULL);
  if (n < 0) {  // the byte came after the EINTR: take it out
    if (read(g_pipe[0], &c, 1) != 1) return;
  }
  printf("%s: read=%zd errno=%s handled=%d\n", label, n, err ? strerrorname_np(err) : "0",
         (int)g_handled);
}

// CPU time first: the recorder hears of a thread at its first CPU sample, and its off-CPU samples
// are written from then on, so that the calls below go through the whole write path.
static void spin_ms(int ms) {
  struct timespec start, now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  do {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
}

// Holds `mutex` (or write-locks `rwlock`) for 30 ms from another thread, posts `sem` after 30 ms.
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t g_rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t g_barrier;
static sem_t g_sem;
static sem_t g_taken;

static void* hold_mutex(void* arg) {
  (void)arg;
  pthread_mutex_lock(&g_mutex);
  sem_post(&g_taken);
  pause_ms(30);
  pthread_mutex_unlock(&g_mutex);
  return NULL;
}

static void* hold_rwlock(void* arg) {
  (void)arg;
  pthread_rwlock_wrlock(&g_rwlock);
  sem_post(&g_taken);
  pause_ms(60);
  pthread_rwlock_unlock(&g_rwlock);
  return NULL;
}

static void* post_later(void* arg) {
  (void)arg;
  pause_ms(30);
  sem_post(&g_sem);
  return NULL;
}

static void* barrier_later(void* arg) {
  pause_ms(30);
  *(int*)arg = pthread_barrier_wait(&g_barrier) == PTHREAD_BARRIER_SERIAL_THREAD;
  return NULL;
}

static void* sleep_30(void* arg) {
  (void)arg;
  pause_ms(30);
  return NULL;
}

static struct timespec in_ms(clockid_t clock, int ms) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  ts.tv_nsec += ms * 1000000L;
  ts.tv_sec += ts.tv_nsec / 1000000000L;
  ts.tv_nsec %= 1000000000L;
  return ts;
}

static const char* code(int rc) {
  return rc == 0 ? "0" : strerrorname_np(rc);
}

// A program linked to the old condition variable (pthread_cond_*@GLIBC_2.2.5, before glibc
// 2.3.2) keeps working: no wrapper forwards its calls to the new one (which crashed it).
__asm__(".symver old_cond_init, pthread_cond_init@GLIBC_2.2.5");
__asm__(".symver old_cond_wait, pthread_cond_wait@GLIBC_2.2.5");
__asm__(".symver old_cond_timedwait, pthread_cond_timedwait@GLIBC_2.2.5");
__asm__(".symver old_cond_signal, pthread_cond_signal@GLIBC_2.2.5");
int old_cond_init(pthread_cond_t* cond, const pthread_condattr_t* attr);
int old_cond_wait(pthread_cond_t* cond, pthread_mutex_t* mutex);
int old_cond_timedwait(pthread_cond_t* cond, pthread_mutex_t* mutex,
                       const struct timespec* abstime);
int old_cond_signal(pthread_cond_t* cond);
static pthread_cond_t g_old_cond;
static int g_old_ready;

static void* signal_old_later(void* arg) {
  (void)arg;
  pause_ms(30);
  pthread_mutex_lock(&g_mutex);
  g_old_ready = 1;
  old_cond_signal(&g_old_cond);
  pthread_mutex_unlock(&g_mutex);
  return NULL;
}

static void old_condition_variable(void) {
  old_cond_init(&g_old_cond, NULL);
  pthread_t thread;
  pthread_create(&thread, NULL, signal_old_later, NULL);
  pthread_mutex_lock(&g_mutex);
  errno = 125;
  int rc = 0;
  while (!g_old_ready && rc == 0) rc = old_cond_wait(&g_old_cond, &g_mutex);
  printf("old cond: pthread_cond_wait@GLIBC_2.2.5=%s errno=%d\n", code(rc), errno);
  struct timespec until = in_ms(CLOCK_REALTIME, 30);
  errno = 126;
  rc = old_cond_timedwait(&g_old_cond, &g_mutex, &until);
  printf("old cond timed out: pthread_cond_timedwait@GLIBC_2.2.5=%s errno=%d\n", code(rc), errno);
  pthread_mutex_unlock(&g_mutex);
  pthread_join(thread, NULL);
}

static void thread_waits(void) {
  sem_init(&g_taken, 0, 0);
  pthread_t thread;
  int rc;

  // Mutexes: contended (blocks 30 ms), a timed lock that times out, a bad time, and an
  // error-checking mutex locked twice (the trylock first, then the lock's own EDEADLK).
  pthread_create(&thread, NULL, hold_mutex, NULL);
  sem_wait(&g_taken);
  errno = 101;
  rc = pthread_mutex_lock(&g_mutex);
  printf("mutex contended: pthread_mutex_lock=%s errno=%d\n", code(rc), errno);
  pthread_mutex_unlock(&g_mutex);
  pthread_join(thread, NULL);
  pthread_create(&thread, NULL, hold_mutex, NULL);
  sem_wait(&g_taken);
  struct timespec until = in_ms(CLOCK_REALTIME, 10);
  errno = 102;
  rc = pthread_mutex_timedlock(&g_mutex, &until);
  printf("mutex timed out: pthread_mutex_timedlock=%s errno=%d\n", code(rc), errno);
  const struct timespec bad = {0, -1};
  errno = 103;
  rc = pthread_mutex_timedlock(&g_mutex, &bad);
  printf("mutex bad time: pthread_mutex_timedlock=%s errno=%d\n", code(rc), errno);
  until = in_ms(CLOCK_MONOTONIC, 10);
  errno = 104;
  rc = pthread_mutex_clocklock(&g_mutex, CLOCK_MONOTONIC, &until);
  printf("mutex clock timed out: pthread_mutex_clocklock=%s errno=%d\n", code(rc), errno);
  pthread_join(thread, NULL);
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_t checked;
  pthread_mutex_init(&checked, &attr);
  pthread_mutex_lock(&checked);
  errno = 105;
  rc = pthread_mutex_lock(&checked);
  printf("mutex relocked: pthread_mutex_lock=%s errno=%d\n", code(rc), errno);
  pthread_mutex_unlock(&checked);

  // Condition variables: a timed wait that times out, and a bad clock.
  pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
  pthread_mutex_lock(&g_mutex);
  until = in_ms(CLOCK_REALTIME, 30);
  errno = 106;
  rc = pthread_cond_timedwait(&cond, &g_mutex, &until);
  printf("cond timed out: pthread_cond_timedwait=%s errno=%d\n", code(rc), errno);
  until = in_ms(CLOCK_MONOTONIC, 30);
  errno = 107;
  rc = pthread_cond_clockwait(&cond, &g_mutex, CLOCK_MONOTONIC, &until);
  printf("cond clock timed out: pthread_cond_clockwait=%s errno=%d\n", code(rc), errno);
  errno = 108;
  rc = pthread_cond_clockwait(&cond, &g_mutex, CLOCK_PROCESS_CPUTIME_ID, &until);
  printf("cond bad clock: pthread_cond_clockwait=%s errno=%d\n", code(rc), errno);
  pthread_mutex_unlock(&g_mutex);

  // Read-write locks: a read lock waiting for a writer, a timed one that times out, and a write
  // lock taken twice.
  pthread_create(&thread, NULL, hold_rwlock, NULL);
  sem_wait(&g_taken);
  until = in_ms(CLOCK_REALTIME, 10);
  errno = 109;
  rc = pthread_rwlock_timedrdlock(&g_rwlock, &until);
  printf("rwlock timed out: pthread_rwlock_timedrdlock=%s errno=%d\n", code(rc), errno);
  errno = 110;
  rc = pthread_rwlock_rdlock(&g_rwlock);
  printf("rwlock contended: pthread_rwlock_rdlock=%s errno=%d\n", code(rc), errno);
  pthread_rwlock_unlock(&g_rwlock);
  pthread_join(thread, NULL);
  pthread_rwlock_wrlock(&g_rwlock);
  errno = 111;
  rc = pthread_rwlock_wrlock(&g_rwlock);
  printf("rwlock relocked: pthread_rwlock_wrlock=%s errno=%d\n", code(rc), errno);
  pthread_rwlock_unlock(&g_rwlock);

  // Semaphores (errno on failure): posted after 30 ms, and a timed wait that times out.
  sem_init(&g_sem, 0, 0);
  pthread_create(&thread, NULL, post_later, NULL);
  errno = 112;
  rc = sem_wait(&g_sem);
  printf("sem posted: sem_wait=%d errno=%d\n", rc, errno);
  pthread_join(thread, NULL);
  until = in_ms(CLOCK_REALTIME, 30);
  errno = 113;
  rc = sem_timedwait(&g_sem, &until);
  printf("sem timed out: sem_timedwait=%d errno=%s\n", rc, strerrorname_np(errno));
  until = in_ms(CLOCK_MONOTONIC, 30);
  errno = 114;
  rc = sem_clockwait(&g_sem, CLOCK_MONOTONIC, &until);
  printf("sem clock timed out: sem_clockwait=%d errno=%s\n", rc, strerrorname_np(errno));

  // Joins: a thread that ends after 30 ms, a timed join that times out, and the thread itself.
  pthread_create(&thread, NULL, sleep_30, NULL);
  until = in_ms(CLOCK_REALTIME, 10);
  errno = 115;
  rc = pthread_timedjoin_np(thread, NULL, &until);
  printf("join timed out: pthread_timedjoin_np=%s errno=%d\n", code(rc), errno);
  errno = 116;
  rc = pthread_join(thread, NULL);
  printf("join: pthread_join=%s errno=%d\n", code(rc), errno);
  errno = 117;
  rc = pthread_join(pthread_self(), NULL);
  printf("join self: pthread_join=%s errno=%d\n", code(rc), errno);

  // A barrier the other thread reaches 30 ms later: it is the serial one.
  int other_serial = 0;
  pthread_barrier_init(&g_barrier, NULL, 2);
  pthread_create(&thread, NULL, barrier_later, &other_serial);
  errno = 118;
  rc = pthread_barrier_wait(&g_barrier);
  pthread_join(thread, NULL);
  printf("barrier: pthread_barrier_wait=%d other_serial=%d errno=%d\n", rc, other_serial, errno);

  // The masked waits: a 30 ms timeout each, and a failure.
  const struct timespec wait_30 = {0, 30000000L};
  sigset_t mask;
  sigemptyset(&mask);
  errno = 119;
  rc = ppoll(NULL, 0, &wait_30, &mask);
  printf("ppoll 30 ms: ppoll=%d errno=%d\n", rc, errno);
  errno = 120;
  rc = pselect(0, NULL, NULL, NULL, &wait_30, &mask);
  printf("pselect 30 ms: pselect=%d errno=%d\n", rc, errno);
  errno = 121;
  rc = pselect(-1, NULL, NULL, NULL, &wait_30, &mask);
  printf("pselect bad: pselect=%d errno=%s\n", rc, strerrorname_np(errno));
  const int ep = epoll_create1(0);
  struct epoll_event event;
  errno = 122;
  rc = epoll_pwait(ep, &event, 1, 30, &mask);
  printf("epoll_pwait 30 ms: epoll_pwait=%d errno=%d\n", rc, errno);
  errno = 123;
  rc = epoll_pwait2(ep, &event, 1, &wait_30, &mask);
  printf("epoll_pwait2 30 ms: epoll_pwait2=%d errno=%d\n", rc, errno);
  errno = 124;
  rc = epoll_pwait2(-1, &event, 1, &wait_30, &mask);
  printf("epoll_pwait2 bad: epoll_pwait2=%d errno=%s\n", rc, strerrorname_np(errno));
  close(ep);
  old_condition_variable();
}

int main(void) {
  g_main = pthread_self();
  spin_ms(50);
  if (pipe(g_pipe) != 0) return 1;
  blocked_read(SA_RESTART, "restart");
  blocked_read(0, "no-restart");

  char c;
  errno = 0;
  ssize_t n = read(-1, &c, 1);
  printf("bad fd: read=%zd errno=%s\n", n, strerrorname_np(errno));
  const struct timespec bad = {0, -1};
  errno = 0;
  int rc = nanosleep(&bad, NULL);
  printf("bad sleep: nanosleep=%d errno=%s\n", rc, strerrorname_np(errno));

  errno = 12345;
  rc = poll(NULL, 0, 30);
  printf("poll 30 ms: poll=%d errno=%d\n", rc, errno);
  errno = 54321;
  const struct timespec ts = {0, 30000000L};
  rc = nanosleep(&ts, NULL);
  printf("sleep 30 ms: nanosleep=%d errno=%d\n", rc, errno);
  errno = 777;
  rc = usleep(30000);
  printf("usleep 30 ms: usleep=%d errno=%d\n", rc, errno);
  thread_waits();
  return 0;
}
