/* Behaves like a daemon that closes every descriptor it did not open, then talks over a socketpair
 * of its own. Mode "wrapped" closes through the C library: close_range(3, ~0U, 0), closefrom(3),
 * then close(fd) for every fd up to its limit; mode "raw" closes with a raw close_range system
 * call, which no wrapper sees. Then: socketpair, a 40-byte message each way, checked to arrive
 * exactly (no byte of anyone else's), and about 0.4 s of CPU in closer_burn. Prints "own bytes
 * ok" and exits 0, or says what arrived and exits 1. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static uint64_t closer_burn(double seconds) {
  volatile uint64_t sink = 0;
  const uint64_t end = cpu_ns() + (uint64_t)(seconds * 1e9);
  while (cpu_ns() < end) {
    for (int i = 0; i < (1 << 20); ++i) sink = sink * 31 + (uint64_t)i;
  }
  return sink;
}

/* Reads exactly `len` bytes or until nothing more comes within 100 ms. */
static ssize_t read_some(int fd, char* buf, size_t cap) {
  struct timeval tv = {0, 100000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  size_t got = 0;
  for (;;) {
    const ssize_t n = recv(fd, buf + got, cap - got, 0);
    if (n <= 0) break;
    got += (size_t)n;
  }
  return (ssize_t)got;
}

int main(int argc, char** argv) {
  const int raw = argc > 1 && strcmp(argv[1], "raw") == 0;
  const double seconds = argc > 2 ? atof(argv[2]) : 0.4;
  closer_burn(seconds / 4); /* sampled with the agent's descriptors still in place */
  if (raw) {
    syscall(SYS_close_range, 3u, ~0u, 0);
  } else {
    close_range(3, ~0u, 0);
    closefrom(3);
    const long max = sysconf(_SC_OPEN_MAX);
    for (long fd = 3; fd < max && fd < 65536; ++fd) close((int)fd);
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
    perror("socketpair");
    return 2;
  }
  const char message[40] = "closer: forty bytes of the program's own";
  char buf[4096];
  for (int round = 0; round < 2; ++round) {
    closer_burn(seconds / 4); /* the agent may write now: ThreadExit, samples, wakeups */
    if (write(sv[round], message, sizeof message) != (ssize_t)sizeof message) return 2;
    const ssize_t n = read_some(sv[1 - round], buf, sizeof buf);
    if (n != (ssize_t)sizeof message || memcmp(buf, message, sizeof message) != 0) {
      fprintf(stderr, "closer: %zd bytes arrived on descriptor %d instead of its own 40\n", n,
              sv[1 - round]);
      return 1;
    }
  }
  closer_burn(seconds / 4);
  printf("own bytes ok\n");
  return 0;
}
