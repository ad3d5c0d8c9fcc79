/* A process family for `userperf record` tests: the main thread and two pthreads burn CPU in
 * functions of their own, then the process forks a child that burns in child_gamma and execs
 * this program again, whose new image burns in exec_delta. Each function is a distinct name a
 * profile must show under the right process and thread.
 *
 * Usage: family [STATUS]      exit with STATUS (default 0) after the whole family finished
 *        family exec-stage    (internal) the exec'd image
 *        family crash         burn, then die of SIGSEGV */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Burns `seconds` of this thread's CPU time, inlined so that each named function burns in its own
 * code (a frame-pointer walk from a frameless leaf would skip the leaf's caller). Each caller
 * passes its own increment: identical bodies would be folded into one function by the compiler. */
static inline __attribute__((always_inline)) uint64_t burn(double seconds, uint64_t increment) {
  const double end = cpu_seconds() + seconds;
  uint64_t x = 1;
  do {
    for (int i = 0; i < 100000; ++i) {
      x = x * 6364136223846793005ull + increment;
      __asm__ volatile("" : "+r"(x));
    }
  } while (cpu_seconds() < end);
  return x;
}

__attribute__((noinline)) uint64_t thread_alpha(void) {
  return burn(0.3, 1);
}
__attribute__((noinline)) uint64_t thread_beta(void) {
  return burn(0.3, 3);
}
__attribute__((noinline)) uint64_t main_epsilon(void) {
  return burn(0.3, 5);
}
__attribute__((noinline)) uint64_t child_gamma(void) {
  return burn(0.3, 7);
}
__attribute__((noinline)) uint64_t exec_delta(void) {
  return burn(0.3, 9);
}

static void* run_alpha(void* arg) {
  (void)arg;
  return (void*)(uintptr_t)thread_alpha();
}
static void* run_beta(void* arg) {
  (void)arg;
  return (void*)(uintptr_t)thread_beta();
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "exec-stage") == 0) {
    printf("family: exec'd image burned %llx\n", (unsigned long long)exec_delta());
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "crash") == 0) {
    main_epsilon();
    raise(SIGSEGV);
    return 0;
  }
  const int status = argc > 1 ? atoi(argv[1]) : 0;
  pthread_t a, b;
  if (pthread_create(&a, NULL, run_alpha, NULL) != 0 ||
      pthread_create(&b, NULL, run_beta, NULL) != 0) {
    perror("pthread_create");
    return 100;
  }
  main_epsilon();
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  fflush(stdout);
  const pid_t child = fork();
  if (child < 0) {
    perror("fork");
    return 101;
  }
  if (child == 0) {
    child_gamma();
    execl("/proc/self/exe", argv[0], "exec-stage", (char*)NULL);
    perror("execl");
    _exit(102);
  }
  int child_status = 0;
  if (waitpid(child, &child_status, 0) != child || !WIFEXITED(child_status) ||
      WEXITSTATUS(child_status) != 0) {
    fprintf(stderr, "family: child failed (status %d)\n", child_status);
    return 103;
  }
  printf("family: done\n");
  return status;
}
