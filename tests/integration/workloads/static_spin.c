/* Built with -static: no dynamic loader runs in it, so the agent cannot be preloaded
 * (record_test.sh refusals) nor loaded into it (record_attach_test.sh). Burns about 0.1 s times
 * argv[1] (1 by default) and exits 3. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  const unsigned long times = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;
  volatile unsigned long sink = 0;
  for (unsigned long i = 0; i < 100000000ul * times; ++i) sink = sink + i;
  printf("static done\n");
  return 3;
}
