// The agent's life in a process: the constructor starts recording the process image, fork gives
// the child a recording of its own, exit says ProcessExit.
//
// A fork child is set up in two steps. The agent's stage of the fork sequence
// (support/fork_sequence.hpp: the layers below it have forgotten their per-process state first)
// runs for every fork (fork(), daemon(), ...): an eager session's child drops what it inherited
// (the parent's rings, its socket copy); a lazy session's child starts its clocks over its thread
// and takes the rest over at its first tick. For an eager session the fork() wrapper then opens
// the child's own session: a new engine, BPF registry, clock timers and connection. A child forked
// past the wrapper (libc's internal forks) runs unrecorded and never writes into the parent's
// rings.
#include <dlfcn.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "api/engine_instance.hpp"
#include "core/engine.hpp"
#include "pmu/clock/clock_timer.hpp"
#include "record/agent/session.hpp"
#include "record/agent/signal_mask.hpp"
#include "record/agent/thread_events.hpp"
#include "record/protocol.hpp"
#include "support/descriptors.hpp"
#include "support/fork_sequence.hpp"
#include "support/task_ids.hpp"

namespace userperf::record::agent {
namespace {

// The forking thread's id in the parent, for the child's Hello (read in the child's signal
// handler: initial-exec, as the agent's other TLS).
__attribute__((tls_model("initial-exec"))) constinit thread_local pid_t t_forking_tid = 0;
// An eager session's fork child: the parent's session, until the fork() wrapper starts the
// child's, and the ids of the forking thread's events, which the child's carry.
Session* g_parent_of_child = nullptr;
std::vector<std::uint64_t> g_inherited_ids;
// A lazy session's fork: the child takes the forking thread's events over (set in the prepare
// handler, for the fork under way). And whether this process is such a child still using its
// parent's engine copy, until it starts a thread (take_over_in_child).
__attribute__((tls_model("initial-exec"))) constinit thread_local bool t_lazy_fork = false;
__attribute__((tls_model("initial-exec"))) constinit thread_local bool t_engine_copy = false;

// The child's clocks followed its thread (its first tick, or follow_now): the session and the
// forking thread's events become the child's. SIGNAL-SAFE.
void on_clocks_followed() {
  Session* session = inherited_session();
  if (session == nullptr) return;
  // The forking thread's ids are final when the recorder heard of it, or when they were inherited
  // themselves (a fork child's child before its parent's first sample).
  const bool inherits = forking_thread_heard() || session->inherits;
  adopt_forked_session(*session, t_forking_tid, inherits);
  if (!adopt_forking_thread(*session)) session->active.store(false);
}

// In a lazy session's fork child, in normal context: the clocks follow now, with the clock signal
// blocked so that the handler cannot run in the middle. (Blocked through the agent's own
// pthread_sigmask wrapper, it was not: a tick between the clocks' move and the events' took a
// sample into the parent's ring, shared memory, with the parent's head of the fork's time.)
void follow_now() {
  if (!pmu::forked_clocks_pending()) return;
  const ClockSignalBlocked blocked;
  pmu::follow_forked_clocks();
}

void before_fork() {
  t_forking_tid = current_thread_id();
  // A lazy fork child of a lazy fork child: the clocks follow this thread first (they name the
  // thread that forked it until then).
  if (t_engine_copy) follow_now();
  const Session* session = current_session();
  t_lazy_fork = session != nullptr && !session->eager && prepare_fork_inheritance(*session);
  if (!t_lazy_fork) lock_threads_for_fork();
}

void after_fork_in_parent() {
  if (!t_lazy_fork) unlock_threads_after_fork();
  t_lazy_fork = false;
}

// A lazy session's child writes nothing of the agent's here: a timer per clock over its thread
// (clock_timers_fork_child) and this thread's TLS, which fork has copied already. A shell's fork
// child on its way to exec so costs a timer; one that runs on takes the rest over at its first
// tick (on_clocks_followed).
void after_fork_in_child() {
  if (t_lazy_fork) {
    t_lazy_fork = false;
    t_engine_copy = pmu::clock_timers_fork_child(t_forking_tid, on_clocks_followed) > 0;
    return;
  }
  unlock_threads_after_fork();
  if (const Session* session = current_session()) g_inherited_ids = current_thread_ids(*session);
  forget_threads_in_child();
  g_parent_of_child = leave_parent_session_in_child();
}

// An eager session's child never writes into the parent's rings: its engine, BPF registry, timers
// and connection are new, and only the forking thread exists.
void start_child() {
  const Session* parent = g_parent_of_child;
  if (parent == nullptr) return;  // nothing written: a lazy session's child copies no page here
  g_parent_of_child = nullptr;
  pmu::clock_timers_after_fork_child();
  api::reset_after_fork();
  Session* session = start_child_session(*parent, t_forking_tid, std::move(g_inherited_ids));
  g_inherited_ids.clear();
  if (session != nullptr) start_thread(*session, 0);
}

}  // namespace

// A lazy session's fork child that must speak: its clocks follow its thread now.
void settle_fork_child() {
  if (t_engine_copy) follow_now();
}

// A lazy session's fork child about to use the engine (it starts a thread): the clocks follow its
// thread, and new threads get an engine of their own - the copy's lock may have been held by a
// thread of the parent at the fork. The forking thread's events stay the copy's.
void take_over_in_child() {
  if (!t_engine_copy) return;
  follow_now();
  t_engine_copy = false;
  Session* session = current_session();
  pmu::clock_timers_after_fork_child();
  take_over_registry_in_child();
  api::reset_after_fork();
  if (session != nullptr && session->inherits) {
    session->inherited_ids = current_thread_ids(*session);
  }
}

namespace {

// exit(): the recorder hears of it when it heard of the process. The events stay open and keep
// sampling through the atexit handlers and destructors that run after this one; the recorder
// drains the rings when the connection ends.
void at_exit() {
  Session* session = current_session();
  if (session == nullptr) return;
  // A fork child that ends before its first tick (a CPU-time timer expires on a scheduler tick,
  // and the recorder's ticker pokes only threads it has heard of): its clocks follow it now, so
  // that its whole periods are counted lost and the recorder hears of it, as kernel perf writes
  // every child's COMM, FORK and EXIT.
  settle_fork_child();
  count_ending_periods();
  if (!heard(*session)) return;
  send_all_counts(*session, true);
  ProcessExitMessage message;
  // This process's pid, not the session's as read here: a fork child's first tick may come
  // between here and the send, and its clocks follow it there, making the session the child's
  // (the parent's pid went out on the child's connection, and the recorder dropped the message).
  message.pid = support::current_pid();
  message.status = 0;  // exit()'s status is not known to an atexit handler
  message.time = monotonic_ns();
  send(*session, &message, sizeof message);
}

__attribute__((constructor)) void start_agent() {
  // Before the first descriptor: the agent's live high above the program's (descriptors.hpp).
  if (std::getenv(kSocketEnv) != nullptr) {
    rlimit files{};
    if (getrlimit(RLIMIT_NOFILE, &files) == 0) {
      support::set_descriptor_floor(support::descriptor_floor_for(files.rlim_cur));
    }
  }
  Session* session = start_session_from_env();
  if (session == nullptr) return;
  init_thread_key();
  pmu::set_clock_sample_gate(may_sample);
  guard_clock_signal();
  support::set_fork_hooks(
      support::ForkStage::kAgent,
      {.prepare = before_fork, .parent = after_fork_in_parent, .child = after_fork_in_child});
  std::atexit(at_exit);
  start_thread(*session, 0);
}

}  // namespace
}  // namespace userperf::record::agent

extern "C" __attribute__((visibility("default"))) pid_t fork() {
  using Fork = pid_t (*)();
  static const auto real_fork = reinterpret_cast<Fork>(dlsym(RTLD_NEXT, "fork"));
  const pid_t pid = real_fork();
  if (pid == 0) userperf::record::agent::start_child();
  return pid;
}
