/* See calltrace_work.h. CALLTRACE_WORK_VARIANT names this copy (instrumented or plain). */
#include "calltrace_work.h"

#define CALLTRACE_CAT2(a, b) a##_##b
#define CALLTRACE_CAT(a, b) CALLTRACE_CAT2(a, b)
#define CALLTRACE_LEAF CALLTRACE_CAT(calltrace_leaf, CALLTRACE_WORK_VARIANT)
#define CALLTRACE_WORK CALLTRACE_CAT(calltrace_work, CALLTRACE_WORK_VARIANT)

/* A real call in both copies: not inlined, not cloned, not known to the caller. */
#if defined(__clang__)
#define CALLTRACE_OPAQUE __attribute__((noinline))
#else
#define CALLTRACE_OPAQUE __attribute__((noipa))
#endif

CALLTRACE_OPAQUE static unsigned long CALLTRACE_LEAF(unsigned long x) {
  return (x * 2654435761u) >> 7;
}

unsigned long CALLTRACE_WORK(unsigned long n) {
  unsigned long sum = 0;
  for (unsigned long i = 0; i < n; ++i) sum += CALLTRACE_LEAF(i);
  return sum;
}
