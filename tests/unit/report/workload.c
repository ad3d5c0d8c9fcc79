// The program `userperf report`'s tests record with perf: known shares of CPU time on known call
// paths. Units of work: main -> parent -> heavy (3), main -> parent -> light (1),
// main -> light (1); so self heavy 60%, light 40%; children main 100%, parent 80%.
// Built twice (tests/unit/report/workloads.cmake): with frame pointers, and without for dwarf.
#include <stdlib.h>

static volatile unsigned long sink;

// Each function spins in its own loop, so that the samples' leaf is the function itself. With
// LEAF_FRAMES (the frame-pointer build), asking for the frame address makes gcc 12 set up the
// frame even in a leaf (-fno-omit-frame-pointer and -mno-omit-leaf-frame-pointer alone leave
// these leaves frameless), so frame-pointer call chains keep the leaf's caller.
#ifdef LEAF_FRAMES
#define LEAF_FRAME() __asm__ volatile("" ::"r"(__builtin_frame_address(0)))
#else
#define LEAF_FRAME() (void)0
#endif
#define SPIN(iterations) \
  LEAF_FRAME();          \
  for (long i = 0; i < (iterations); ++i) sink += (unsigned long)i * (unsigned long)i

__attribute__((noinline)) void heavy(long unit) {
  SPIN(3 * unit);
}

__attribute__((noinline)) void light(long unit) {
  SPIN(unit);
}

__attribute__((noinline)) void parent(long unit) {
  heavy(unit);
  light(unit);
  __asm__ volatile("" ::: "memory");  // keeps the call to light from becoming a tail call
}

int main(int argc, char** argv) {
  const long unit = argc > 1 ? atol(argv[1]) : 50000000L;
  parent(unit);
  light(unit);
  return 0;
}
