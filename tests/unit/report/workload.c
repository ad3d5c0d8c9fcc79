// The program `userperf report`'s tests record with perf: known shares of CPU time on known call
// paths. Units of work: main -> parent -> heavy (3), main -> parent -> light (1),
// main -> light (1); so self heavy 60%, light 40%; children main 100%, parent 80%.
// A unit is CPU time, not a count of iterations, so the shares and the number of samples are the
// same on any machine (a fixed count ran 25x faster on one CPU than on another).
// Built twice (tests/unit/report/workloads.cmake): with frame pointers, and without for dwarf.
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static long cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

// Each function spins in its own loop, so that the samples' leaf is the function itself. With
// LEAF_FRAMES (the frame-pointer build), asking for the frame address makes gcc 12 set up the
// frame even in a leaf (-fno-omit-frame-pointer and -mno-omit-leaf-frame-pointer alone leave
// these leaves frameless), so frame-pointer call chains keep the leaf's caller.
#ifdef LEAF_FRAMES
#define LEAF_FRAME() __asm__ volatile("" ::"r"(__builtin_frame_address(0)))
#else
#define LEAF_FRAME() (void)0
#endif
// Spins until the thread has used NS of CPU time here, reading the clock (a system call) once
// every 2^18 iterations: well under 1% of the time.
#define SPIN(ns)                                    \
  LEAF_FRAME();                                     \
  for (long end = cpu_ns() + (ns); cpu_ns() < end;) \
    for (long i = 0; i < (1L << 18); ++i) sink += (unsigned long)i * (unsigned long)i

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
  const long unit = (argc > 1 ? atol(argv[1]) : 100) * 1000000L;  // milliseconds of CPU time
  parent(unit);
  light(unit);
  return 0;
}
