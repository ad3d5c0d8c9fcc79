// record_test.sh off-cpu-condvar: both of glibc's condition variables. Each round the main thread
// computes 10 ms, then waits 10 ms four times: in pthread_cond_wait and pthread_cond_timedwait of
// the default implementation (@GLIBC_2.3.2, what programs and libstdc++'s
// std::condition_variable::wait link to), each signalled by a holder thread 10 ms after being
// asked (new_wait_phase, new_timedwait_phase), and in those of the old condition variable
// (@GLIBC_2.2.5, linked here with .symver as a program built before glibc 2.3.2 is), the wait
// signalled (old_wait_phase) and the timed wait running out after 10 ms (old_timedwait_phase).
// The holder sleeps with a raw system call, which the agent does not wrap: offcpu-time is 300 ms
// in each phase, 25/25/25/25.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__asm__(".symver old_cond_init, pthread_cond_init@GLIBC_2.2.5");
__asm__(".symver old_cond_wait, pthread_cond_wait@GLIBC_2.2.5");
__asm__(".symver old_cond_timedwait, pthread_cond_timedwait@GLIBC_2.2.5");
__asm__(".symver old_cond_signal, pthread_cond_signal@GLIBC_2.2.5");
int old_cond_init(pthread_cond_t* cond, const pthread_condattr_t* attr);
int old_cond_wait(pthread_cond_t* cond, pthread_mutex_t* mutex);
int old_cond_timedwait(pthread_cond_t* cond, pthread_mutex_t* mutex,
                       const struct timespec* abstime);
int old_cond_signal(pthread_cond_t* cond);

enum { kRounds = 30, kPhaseNs = 10 * 1000 * 1000 };

static int g_request[2];
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_new_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t g_old_cond;
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

// 'n': signals the default condition 10 ms later; 'o': the old one.
static void* holder(void* arg) {
  (void)arg;
  char c;
  while (syscall(SYS_read, g_request[0], &c, 1) == 1) {
    raw_sleep(kPhaseNs);
    pthread_mutex_lock(&g_mutex);
    g_ready = 1;
    if (c == 'n') {
      pthread_cond_signal(&g_new_cond);
    } else {
      old_cond_signal(&g_old_cond);
    }
    pthread_mutex_unlock(&g_mutex);
  }
  return NULL;
}

__attribute__((noinline)) void compute_phase(void) {
  const long long end = thread_cpu_ns() + kPhaseNs;
  unsigned long x = g_sink;
  while (thread_cpu_ns() < end) {
    for (int i = 0; i < 100000; ++i) x = x * 6364136223846793005UL + 1442695040888963407UL;
  }
  g_sink = x;
}

static void ask(char c) {
  g_ready = 0;
  if (syscall(SYS_write, g_request[1], &c, 1) != 1) perror("request");
}

static struct timespec realtime_in(long ns) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_nsec += ns;
  until.tv_sec += until.tv_nsec / 1000000000L;
  until.tv_nsec %= 1000000000L;
  return until;
}

__attribute__((noinline)) void new_wait_phase(void) {
  pthread_mutex_lock(&g_mutex);
  ask('n');
  while (!g_ready) pthread_cond_wait(&g_new_cond, &g_mutex);
  pthread_mutex_unlock(&g_mutex);
}

__attribute__((noinline)) void new_timedwait_phase(void) {
  pthread_mutex_lock(&g_mutex);
  ask('n');
  const struct timespec until = realtime_in(10L * 1000 * 1000 * 1000);
  while (!g_ready) pthread_cond_timedwait(&g_new_cond, &g_mutex, &until);
  pthread_mutex_unlock(&g_mutex);
}

__attribute__((noinline)) void old_wait_phase(void) {
  pthread_mutex_lock(&g_mutex);
  ask('o');
  while (!g_ready) old_cond_wait(&g_old_cond, &g_mutex);
  pthread_mutex_unlock(&g_mutex);
}

__attribute__((noinline)) void old_timedwait_phase(void) {
  pthread_mutex_lock(&g_mutex);
  const struct timespec until = realtime_in(kPhaseNs);
  int rc = 0;
  while (rc != ETIMEDOUT) rc = old_cond_timedwait(&g_old_cond, &g_mutex, &until);
  pthread_mutex_unlock(&g_mutex);
}

int main(void) {
  if (pipe(g_request) != 0 || old_cond_init(&g_old_cond, NULL) != 0) return 1;
  pthread_t holder_thread;
  if (pthread_create(&holder_thread, NULL, holder, NULL) != 0) return 1;
  for (int round = 0; round < kRounds; ++round) {
    compute_phase();
    new_wait_phase();
    new_timedwait_phase();
    old_wait_phase();
    old_timedwait_phase();
  }
  close(g_request[1]);
  pthread_join(holder_thread, NULL);
  return 0;
}
