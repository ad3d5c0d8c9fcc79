/* The execl family through the agent's wrappers (argv built on the stack): two failing calls
 * (execlp, execl), then execle of itself with three arguments and an environment of its own; the
 * new image prints what it got. Usage: exec_variants
 *
 * exec_variants vfork PROGRAM: vfork children exec PROGRAM, one that fails first, then one before
 * this process's first sample and one after 50 ms of its CPU; prints their exit statuses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int vfork_exec(const char* program) {
  const pid_t child = vfork();
  if (child < 0) return -1;
  if (child == 0) {
    execl(program, program, (char*)NULL);
    _exit(127);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void spin_ms(double ms) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  const double end = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6 + ms;
  volatile unsigned long sink = 0;
  for (;;) {
    for (int i = 0; i < 10000; ++i) sink = sink + (unsigned long)i;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    if ((double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6 >= end) return;
  }
}

int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[1], "vfork") == 0) {
    const int missing = vfork_exec("/no/such/program");
    const int quiet = vfork_exec(argv[2]);
    spin_ms(50);
    const int heard = vfork_exec(argv[2]);
    printf("vfork: %d %d %d\n", missing, quiet, heard);
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "image") == 0) {
    const char* value = getenv("EXEC_VARIANTS");
    printf("image: %s %s %s env=%s\n", argv[1], argc > 2 ? argv[2] : "-", argc > 3 ? argv[3] : "-",
           value != NULL ? value : "-");
    return 0;
  }
  if (execlp("/no/such/program", "x", "y", (char*)NULL) != -1) return 1;
  if (execl("/no/such/program", "x", (char*)NULL) != -1) return 1;
  char* env[] = {"EXEC_VARIANTS=42", NULL};
  execle("/proc/self/exe", argv[0], "image", "two", "three", (char*)NULL, env);
  perror("execle");
  return 3;
}
