// Who the calling thread is: the kernel's current->tgid and current->pid, for every layer that
// writes them into a record or a helper's answer. Cached per thread in the static TLS block
// (initial-exec: no allocation, no lock), so they are SIGNAL-SAFE: the first call on a thread makes
// the system call, later ones are a load. The fork sequence (fork_sequence.hpp) forgets them in a
// fork child before any hook runs.
#pragma once

#include <sys/types.h>

namespace userperf::support {

namespace detail {
// task_ids.cpp's cache, declared here so that current_pid() and current_tid() inline to one TLS
// load on the write path (every sample carries them; a ring compares its single writer with the
// caller on every record).
extern __attribute__((tls_model("initial-exec"))) constinit thread_local pid_t t_pid;
extern __attribute__((tls_model("initial-exec"))) constinit thread_local pid_t t_tid;
pid_t fetch_pid();
pid_t fetch_tid();
}  // namespace detail

inline pid_t current_pid() {
  const pid_t pid = detail::t_pid;
  return pid != 0 ? pid : detail::fetch_pid();
}
inline pid_t current_tid() {
  const pid_t tid = detail::t_tid;
  return tid != 0 ? tid : detail::fetch_tid();
}
// The cached thread id, 0 when not known yet. A vfork child runs on its parent thread's memory
// and no fork hook runs in it: there it is still the parent thread's, different from gettid().
pid_t cached_tid();

}  // namespace userperf::support
