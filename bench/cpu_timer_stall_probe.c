// How long a thread's periodic CPU-time timer can go without firing: the mechanism userperf's
// clocks use alone from 10 ms periods up (docs/record.md, Limits). Each round arms a 10 ms
// periodic timer_create(CLOCK_THREAD_CPUTIME_ID) timer that signals this thread, burns 150 ms of
// the thread's CPU time, and notes the CPU time at each signal. It prints the rounds whose longest
// stretch of CPU time without a signal (from the start, between signals, or to the end) reached
// 40 ms, four periods, with the timer's state then (timer_gettime's 1 ns: expired, not yet fired),
// and a summary. Run it alone and beside CPU-bound programs:
//   cc -O2 -o /tmp/cpu_timer_stall_probe bench/cpu_timer_stall_probe.c &&
//   /tmp/cpu_timer_stall_probe 400
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { kMaxSignals = 64 };
static const long kPeriodNs = 10000000, kBurnNs = 150000000, kStallNs = 40000000;

static volatile int signals;
static volatile long signal_cpu_ns[kMaxSignals];

static long thread_cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void on_signal(int signo, siginfo_t* info, void* context) {
  (void)signo, (void)info, (void)context;
  if (signals < kMaxSignals) signal_cpu_ns[signals] = thread_cpu_ns();
  ++signals;
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 200;
  const int signo = SIGRTMIN + 4;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(signo, &sa, NULL);
  int stalled = 0;
  long total_signals = 0, longest = 0;
  for (int r = 0; r < rounds; ++r) {
    signals = 0;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = signo;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    timer_t timer;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer) != 0) return perror("timer_create"), 1;
    const struct itimerspec every = {{0, kPeriodNs}, {0, kPeriodNs}};
    const long start = thread_cpu_ns();
    timer_settime(timer, 0, &every, NULL);
    while (thread_cpu_ns() - start < kBurnNs) {
    }
    struct itimerspec state;
    timer_gettime(timer, &state);
    const struct itimerspec stop = {{0, 0}, {0, 0}};
    timer_settime(timer, 0, &stop, NULL);
    timer_delete(timer);
    const long used = thread_cpu_ns() - start;
    const int n = signals < kMaxSignals ? signals : kMaxSignals;
    long gap = 0, previous = start;
    for (int k = 0; k < n; ++k) {
      if (signal_cpu_ns[k] - previous > gap) gap = signal_cpu_ns[k] - previous;
      previous = signal_cpu_ns[k];
    }
    if (start + used - previous > gap) gap = start + used - previous;
    total_signals += signals;
    if (gap > longest) longest = gap;
    if (gap < kStallNs) continue;
    ++stalled;
    printf("round %d: %d signals in %ld ms of CPU, longest gap %ld ms, at:", r, signals,
           used / 1000000, gap / 1000000);
    for (int k = 0; k < n; ++k) printf(" %ld", (signal_cpu_ns[k] - start) / 1000000);
    printf(" | timer value at the end %ld ns\n",
           state.it_value.tv_sec * 1000000000L + state.it_value.tv_nsec);
  }
  printf(
      "%d of %d rounds had a gap of %ld ms or more; %.1f signals per round (%ld periods of "
      "CPU time); longest gap %ld ms\n",
      stalled, rounds, kStallNs / 1000000, (double)total_signals / rounds, kBurnNs / kPeriodNs,
      longest / 1000000);
  return 0;
}
