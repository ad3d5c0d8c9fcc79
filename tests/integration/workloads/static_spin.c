/* Built with -static: no dynamic loader runs in it, so the agent cannot be preloaded
 * (record_test.sh refusals). Burns about 0.1 s and exits 3. */
#include <stdio.h>

int main(void) {
  volatile unsigned long sink = 0;
  for (unsigned long i = 0; i < 100000000ul; ++i) sink = sink + i;
  printf("static done\n");
  return 3;
}
