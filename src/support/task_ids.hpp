// Who the calling thread is: the kernel's current->tgid and current->pid, for every layer that
// writes them into a record or a helper's answer. Cached per thread in the static TLS block
// (initial-exec: no allocation, no lock), so they are SIGNAL-SAFE: the first call on a thread makes
// the system call, later ones are a load. The fork sequence (fork_sequence.hpp) forgets them in a
// fork child before any hook runs.
#pragma once

#include <sys/types.h>

namespace userperf::support {

pid_t current_pid();
pid_t current_tid();
// The cached thread id, 0 when not known yet. A vfork child runs on its parent thread's memory
// and no fork hook runs in it: there it is still the parent thread's, different from gettid().
pid_t cached_tid();

}  // namespace userperf::support
