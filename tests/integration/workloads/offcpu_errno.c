// record_test.sh off-cpu-errno: the results and errno of wrapped blocking calls, printed one per
// line, which must be the same bare and under `userperf record --off-cpu`: a read blocked while a
// SA_RESTART handler runs (restarted, returns the byte), the same without SA_RESTART (EINTR), a
// bad descriptor (EBADF), a bad sleep (EINVAL), and errno left untouched by calls that succeed
// after blocking (the off-CPU sample is written between the call's return and the wrapper's).
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
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
  return 0;
}
