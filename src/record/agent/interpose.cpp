// The libc and libdl functions the agent wraps (exported by agent.map; the real ones come from
// dlsym(RTLD_NEXT)): pthread_create (new threads set up their events before the user's routine),
// pthread_setname_np (Comm); a new thread also takes its creator's view of the clock signal's mask
// (signal_mask.hpp). Not dlopen: glibc resolves a dlopen'ed name (RUNPATH, $ORIGIN, the
// caller's namespace) from its caller's address, which a wrapper would change; the recorder finds
// objects loaded later by re-reading /proc/PID/maps.
#include <dlfcn.h>
#include <pthread.h>

#include <signal.h>

#include <cerrno>
#include <new>

#include "pmu/clock/clock_timer.hpp"
#include "pmu/internal_thread.hpp"
#include "record/agent/real_function.hpp"
#include "record/agent/session.hpp"
#include "record/agent/signal_mask.hpp"
#include "record/agent/thread_events.hpp"

namespace userperf::record::agent {
namespace {

template <class Function>
Function real(const char* name) {
  Function slot = nullptr;
  return resolve_real(slot, name);
}

// The clock PMU's ticker thread and other threads userperf makes for itself are not recorded.
bool creating_internal_thread() {
  return pmu::creating_internal_thread();
}

struct ThreadStart {
  void* (*routine)(void*);
  void* arg;
  pid_t ptid;
  bool blocks_clock_signal;  // the program's mask for the new thread has it
};

// Whether the program means the new thread's mask to block the clock signal: the attr's mask
// (pthread_attr_setsigmask_np) when it has one, else the creator's.
bool new_thread_blocks_clock_signal(const pthread_attr_t* attr) {
  sigset_t mask;
  if (attr != nullptr && pthread_attr_getsigmask_np(attr, &mask) == 0) {
    return sigismember(&mask, userperf::pmu::clock_signal()) == 1;
  }
  return program_blocks_clock_signal();
}

void* start_recorded_thread(void* p) {
  const ThreadStart start = *static_cast<ThreadStart*>(p);
  delete static_cast<ThreadStart*>(p);
  if (guarding_clock_signal()) adopt_thread_mask(start.blocks_clock_signal);
  if (Session* session = current_session()) start_thread(*session, start.ptid);
  return start.routine(start.arg);
}

}  // namespace
}  // namespace userperf::record::agent

using namespace userperf::record::agent;

extern "C" {

__attribute__((visibility("default"))) int pthread_create(pthread_t* thread,
                                                          const pthread_attr_t* attr,
                                                          void* (*routine)(void*), void* arg) {
  using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const auto real_create = real<Create>("pthread_create");
  if (real_create == nullptr) return EAGAIN;
  if (creating_internal_thread() || (current_session() == nullptr && !guarding_clock_signal())) {
    return real_create(thread, attr, routine, arg);
  }
  // A fork child still on its parent's engine copy gets its own for the thread's events.
  take_over_in_child();
  auto* start = new (std::nothrow)
      ThreadStart{routine, arg, current_thread_id(), new_thread_blocks_clock_signal(attr)};
  if (start == nullptr) return real_create(thread, attr, routine, arg);
  const int rc = real_create(thread, attr, start_recorded_thread, start);
  if (rc != 0) delete start;
  return rc;
}

__attribute__((visibility("default"))) int pthread_setname_np(pthread_t thread, const char* name) {
  using SetName = int (*)(pthread_t, const char*);
  static const auto real_set_name = real<SetName>("pthread_setname_np");
  const int rc = real_set_name(thread, name);
  // Only recorded threads: userperf's own (the clock ticker) name themselves too.
  if (rc == 0 && current_session() != nullptr) announce_comm(recorded_thread_id(thread), name);
  return rc;
}

}  // extern "C"
