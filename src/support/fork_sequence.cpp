#include "support/fork_sequence.hpp"

#include <pthread.h>

#include <array>
#include <cstddef>

#include "support/task_ids_reset.hpp"

namespace userperf::support {

namespace {

constexpr auto kStages = static_cast<std::size_t>(ForkStage::kCount);
constinit std::array<ForkHooks, kStages> g_hooks{};

void before_fork() {
  for (std::size_t i = kStages; i-- > 0;) {
    if (g_hooks[i].prepare != nullptr) g_hooks[i].prepare();
  }
}

void after_fork_in_parent() {
  for (const ForkHooks& hooks : g_hooks) {
    if (hooks.parent != nullptr) hooks.parent();
  }
}

void after_fork_in_child() {
  forget_task_ids();
  for (const ForkHooks& hooks : g_hooks) {
    if (hooks.child != nullptr) hooks.child();
  }
}

// Registered once, at the first file's static initialisation that sets hooks or at this one's,
// whichever comes first (a process with no hooks still forgets its ids in a child).
bool register_once() {
  static const bool registered =
      pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child) == 0;
  return registered;
}

[[maybe_unused]] const bool g_registered = register_once();

}  // namespace

void set_fork_hooks(ForkStage stage, const ForkHooks& hooks) {
  register_once();
  g_hooks[static_cast<std::size_t>(stage)] = hooks;
}

}  // namespace userperf::support
