/* The execl family through the agent's wrappers (argv built on the stack): two failing calls
 * (execlp, execl), then execle of itself with three arguments and an environment of its own; the
 * new image prints what it got. Usage: exec_variants */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
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
