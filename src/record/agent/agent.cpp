// The agent's life in a process: the constructor starts recording the process image, fork gives
// the child a recording of its own, exit says ProcessExit.
//
// A fork child is set up in two steps. The pthread_atfork child handler runs for every fork
// (fork(), daemon(), ...): it drops what the child inherited (the parent's rings, its socket copy).
// The fork() wrapper then, after every library's child handler has run (userperf's own reset
// per-process state there: a source created before them would be invalidated), opens the child's
// own session: a new engine, BPF registry, clock timers and connection. A child forked past the
// wrapper (libc's internal forks) runs unrecorded and never writes into the parent's rings.
#include <dlfcn.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "api/engine_instance.hpp"
#include "pmu/clock_timer.hpp"
#include "record/agent/session.hpp"
#include "record/agent/signal_mask.hpp"
#include "record/agent/thread_events.hpp"
#include "record/protocol.hpp"
#include "support/descriptors.hpp"

namespace userperf::record::agent {
namespace {

// The forking thread's id in the parent, for the child's Hello.
thread_local pid_t t_forking_tid = 0;
// In a fork child: the parent's session, until the fork() wrapper starts the child's, and the ids
// of the forking thread's events, which the child's inherit.
Session* g_parent_of_child = nullptr;
std::vector<std::uint64_t> g_inherited_ids;

void before_fork() {
  t_forking_tid = current_thread_id();
  lock_threads_for_fork();
}

void after_fork_in_parent() {
  unlock_threads_after_fork();
}

void after_fork_in_child() {
  unlock_threads_after_fork();
  g_inherited_ids = current_thread_ids();
  forget_threads_in_child();
  g_parent_of_child = leave_parent_session_in_child();
}

// The child must never write into the parent's rings: its engine, BPF registry, timers and
// connection are new, and only the forking thread exists.
void start_child() {
  const Session* parent = g_parent_of_child;
  g_parent_of_child = nullptr;
  if (parent == nullptr) return;
  pmu::clock_timers_after_fork_child();
  api::reset_after_fork();
  Session* session = start_child_session(*parent, t_forking_tid, std::move(g_inherited_ids));
  g_inherited_ids.clear();
  if (session != nullptr) start_thread(*session, 0);
}

// exit(): the recorder hears of it when it heard of the process. The events stay open and keep
// sampling through the atexit handlers and destructors that run after this one; the recorder
// drains the rings when the connection ends.
void at_exit() {
  Session* session = current_session();
  if (session == nullptr || !heard(*session)) return;
  ProcessExitMessage message;
  message.pid = session->pid;
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
  pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
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
