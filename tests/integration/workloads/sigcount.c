/* Counts the SIGINTs it receives: burns CPU until the first, waits 300 ms for a second, prints
 * "sigints N" and exits 0. `userperf record` must hand it one ^C, not two (a terminal's ^C reaches
 * the whole foreground process group; the recorder must not forward another). */
#include <signal.h>
#include <stdio.h>
#include <time.h>

static volatile sig_atomic_t g_count;

static void on_sigint(int signo) {
  (void)signo;
  ++g_count;
}

int main(void) {
  struct sigaction sa = {0};
  sa.sa_handler = on_sigint;
  sigaction(SIGINT, &sa, NULL);
  printf("ready\n");
  fflush(stdout);
  volatile unsigned long sink = 0;
  while (g_count == 0) sink = sink + 1;
  struct timespec pause = {0, 300000000};
  while (nanosleep(&pause, &pause) != 0) {
  }
  printf("sigints %d\n", (int)g_count);
  return 0;
}
