// attr.inherit for the C API: libuserperf.so's pthread_create stands in front of libc's (dlsym
// RTLD_NEXT) so that the engine sees the threads a program creates. While no inherit event is open
// it calls libc's at once; otherwise the new thread, before the program's routine, has the
// engine clone its creator's inherit events for it (Engine::inherit_task: the kernel does this in
// copy_process) and, when it ends (return, pthread_exit, cancellation: the unwinding runs the
// guard below), writes its EXIT records and folds its clones back (Engine::exit_task). Threads
// userperf creates for itself (the clock ticker) are left alone. Only in the shared library: a
// static program has libc's pthread_create in the same link, and no RTLD_NEXT.
//
// The recorder's agent has its own pthread_create (it sets up a recorded thread's events); its
// engine never holds an inherit event, so it does not call this hook. In a recorded program that
// links libuserperf.so both run, each for its own engine.
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <new>

#include "api/engine_instance.hpp"
#include "core/engine.hpp"
#include "pmu/internal_thread.hpp"
#include "support/task_ids.hpp"

namespace userperf::api {
namespace {

using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

Create real_create() {
  static const auto real = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "pthread_create"));
  return real;
}

struct ThreadStart {
  void* (*routine)(void*);
  void* arg;
  pid_t ptid;
};

// perf_event_exit_task on the ending thread: EXIT records (to its clones with attr.task), then the
// clones fold into their originals.
struct ExitGuard {
  pid_t pid;
  pid_t tid;
  ~ExitGuard() {
    core::Engine& e = engine();
    e.exit(pid, getppid(), tid, getppid());
    e.exit_task(tid);
  }
};

void* start_inheriting_thread(void* p) {
  const ThreadStart start = *static_cast<ThreadStart*>(p);
  delete static_cast<ThreadStart*>(p);
  const pid_t pid = support::current_pid();
  const pid_t tid = support::current_tid();
  core::Engine& e = engine();
  e.inherit_task(start.ptid, tid);
  // perf_event_fork: a FORK record to the creator's events that ask for task records.
  e.fork(pid, pid, tid, start.ptid);
  ExitGuard guard{pid, tid};
  return start.routine(start.arg);
}

}  // namespace
}  // namespace userperf::api

extern "C" __attribute__((visibility("default"))) int pthread_create(pthread_t* thread,
                                                                     const pthread_attr_t* attr,
                                                                     void* (*routine)(void*),
                                                                     void* arg) {
  using namespace userperf;
  const api::Create real = api::real_create();
  if (real == nullptr) return EAGAIN;
  if (!core::Engine::any_inherit_events() || pmu::creating_internal_thread()) {
    return real(thread, attr, routine, arg);
  }
  auto* start = new (std::nothrow) api::ThreadStart{routine, arg, support::current_tid()};
  if (start == nullptr) return real(thread, attr, routine, arg);
  const int rc = real(thread, attr, api::start_inheriting_thread, start);
  if (rc != 0) delete start;
  return rc;
}
