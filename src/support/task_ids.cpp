#include "support/task_ids.hpp"

#include <unistd.h>

#include "support/fork_sequence.hpp"
#include "support/task_ids_reset.hpp"

namespace userperf::support {

namespace {

// Whoever reads the ids links the sequence that forgets them in a fork child (its file registers
// it at static initialisation; a static library member is linked only when referenced).
[[gnu::used]] constexpr void (*kForkSequence)(ForkStage, const ForkHooks&) = &set_fork_hooks;

}  // namespace

namespace detail {
// In the static TLS block, next to the thread control block that fork has already copied into the
// child: forgetting them there copies no other page.
__attribute__((tls_model("initial-exec"))) constinit thread_local pid_t t_pid = 0;
__attribute__((tls_model("initial-exec"))) constinit thread_local pid_t t_tid = 0;

pid_t fetch_pid() {
  t_pid = getpid();
  return t_pid;
}

pid_t fetch_tid() {
  t_tid = gettid();
  return t_tid;
}
}  // namespace detail

using detail::t_pid;
using detail::t_tid;

pid_t cached_tid() {
  return t_tid;
}

void forget_task_ids() {
  t_pid = 0;
  t_tid = 0;
}

}  // namespace userperf::support
