// A full memory barrier on every running thread of the process, paid by the caller alone
// (membarrier(2) MEMBARRIER_CMD_PRIVATE_EXPEDITED): what lets the write path take its read
// sections and its single-writer rings with plain loads and stores, the way the kernel relies on
// running them on one CPU with interrupts off. The side that changes shared state (a grace
// period's synchronize, a ring that stops being single-writer) calls process_barrier() after its
// stores; every other thread has then either completed its earlier stores or will see the new
// state. The pattern is userspace RCU's "memb" flavour (liburcu) and Folly's asymmetric fence.
//
// Registered once per process at load time and again in a fork child. Where the system call is
// missing or refused (old kernels, seccomp profiles), available() is false and callers keep
// their locked instructions.
#pragma once

namespace userperf::support {

// Whether process_barrier() works. Fixed before main() runs and, in a fork child, before any
// fork hook of a higher stage runs.
bool process_barrier_available();

// The barrier. Only when process_barrier_available(). Signal-safe (one system call).
void process_barrier();

}  // namespace userperf::support
