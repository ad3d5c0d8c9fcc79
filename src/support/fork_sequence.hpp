// The one after-fork sequence of the process (LTTng-UST's ust_before_fork / ust_after_fork_parent
// / ust_after_fork_child, which its fork wrapper calls in a fixed order): a single pthread_atfork
// registration, and each layer that keeps per-process state sets its hooks in its own stage.
// Before the fork the stages run from last to first (the agent takes its locks before the layers
// below it), after it from first to last; in the child, the calling thread's ids (task_ids.hpp)
// are forgotten before any stage runs. pthread_atfork's own order (registration order, that is
// static-initialiser order across files) decides nothing.
#pragma once

namespace userperf::support {

enum class ForkStage {
  kSupport,  // process-wide mechanisms: the process barrier's registration (process_barrier.hpp)
  kCore,     // the write path's per-thread read sections (core/output_guard.hpp)
  kPmu,      // per-thread caches of the PMUs (a calltrace thread's source)
  kAgent,    // the record agent: its registry lock, its session and clocks (record/agent)
  kCount,
};

struct ForkHooks {
  void (*prepare)() = nullptr;  // in the parent, before the fork
  void (*parent)() = nullptr;   // in the parent, after it
  void (*child)() = nullptr;    // in the child (one thread: the one that forked)
};

// Sets the stage's hooks, once, from a static initialiser or before the process forks.
void set_fork_hooks(ForkStage stage, const ForkHooks& hooks);

}  // namespace userperf::support
