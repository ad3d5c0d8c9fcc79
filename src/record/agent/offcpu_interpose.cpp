// --off-cpu (docs/record.md, "Off-CPU time"): the blocking calls the agent wraps to write
// offcpu-time samples. Each wrapper reads the TSC clock around the real call; a call that took at
// least kMinBlockedNs of wall time is taken as blocked, and one sample of the thread's offcpu-time
// event is written with that time as PERIOD and the frame-pointer chain of the call: the real
// function's address as ip, then the wrapper's caller and its callers. No signal is involved: the
// call runs exactly as unwrapped (its return value and errno are the real call's), and a thread
// without the event (no --off-cpu, an unrecorded thread) pays a TLS load and a branch.
//
// t_inside keeps a wrapped call made while the thread is in a wrapper (a signal handler's, the
// sample's own output) from measuring or writing: nested samples would count the same time
// twice. The agent's own calls (its socket, its /proc reads) are measured but never written:
// their caller lies in the agent.
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "pmu/clock/user_context.hpp"
#include "record/agent/real_function.hpp"
#include "record/agent/signal_mask.hpp"
#include "record/agent/thread_events.hpp"
#include "support/monotonic_clock.hpp"

// The agent's own bounds (the linker's): a call whose caller lies in them is the agent's.
extern "C" const char __ehdr_start[] __attribute__((visibility("hidden")));
extern "C" const char _etext[] __attribute__((visibility("hidden")));

namespace userperf::record::agent {
namespace {

// Wall time from which a wrapped call counts as blocked: a call that did not wait (a read of a
// ready pipe, poll with timeout 0) takes 0.3-3 us here, a context switch out and back at least
// tens of microseconds.
constexpr std::uint64_t kMinBlockedNs = 20'000;
constexpr int kMaxCallchain = 128;

__attribute__((tls_model("initial-exec"))) constinit thread_local bool t_inside = false;

bool in_agent(std::uint64_t address) {
  return address >= reinterpret_cast<std::uint64_t>(__ehdr_start) &&
         address < reinterpret_cast<std::uint64_t>(_etext);
}

// The sample of one blocked call. frame: the wrapper's own frame (saved RBP, return address).
__attribute__((noinline)) void blocked(const OffCpuTarget& target, const void* real,
                                       const void* frame, std::uint64_t ns) {
  const int saved_errno = errno;
  const auto fp = reinterpret_cast<std::uint64_t>(frame);
  const std::uint64_t caller = reinterpret_cast<const std::uint64_t*>(frame)[1];
  if (!in_agent(caller)) {
    std::uint64_t chain[kMaxCallchain];
    const bool on_stack = fp >= target.stack_low && fp < target.stack_high;
    const std::uint64_t nr =
        pmu::walk_user_frames(reinterpret_cast<std::uint64_t>(real), fp, fp,
                              on_stack ? target.stack_high : 0, chain, kMaxCallchain);
    write_offcpu_sample(target, reinterpret_cast<std::uint64_t>(real), ns, chain, nr);
  }
  errno = saved_errno;
}

}  // namespace
}  // namespace userperf::record::agent

// One wrapper, exported as `name`: resolves libc's function `real_name` (that `version` of it, or
// the default one when null) into its slot, calls it, and when it blocked writes the sample. The
// wrapper keeps a frame
// (__builtin_frame_address) so the chain starts at its caller. `pre` runs first on every path
// (the declarations `call` needs); `fast`, only on a thread with the event, before the clock is
// read: a non-blocking attempt (trylock) that returns when it succeeded, so that an uncontended
// lock costs no TSC read. `call` is the real call, `real` being the resolved function.
#define USERPERF_OFFCPU_WRAPPER(ret, name, real_name, params, version, pre, fast, call)      \
  namespace userperf::record::agent {                                                        \
  namespace {                                                                                \
  ret(*g_real_##name) params = nullptr;                                                      \
  [[maybe_unused]] const bool g_resolved_##name =                                            \
      resolve_real(g_real_##name, real_name, version) != nullptr;                            \
  }                                                                                          \
  }                                                                                          \
  extern "C" __attribute__((visibility("default"))) ret name params {                        \
    using namespace userperf::record::agent;                                                 \
    const auto real = resolve_real(g_real_##name, real_name, version);                       \
    pre;                                                                                     \
    const OffCpuTarget* target = current_offcpu_target();                                    \
    if (target == nullptr || t_inside) return call;                                          \
    fast;                                                                                    \
    t_inside = true;                                                                         \
    const std::uint64_t start = userperf::support::monotonic_ns();                           \
    const ret rc = call;                                                                     \
    const std::uint64_t ns = userperf::support::monotonic_ns() - start;                      \
    if (ns >= kMinBlockedNs) {                                                               \
      blocked(*target, reinterpret_cast<const void*>(real), __builtin_frame_address(0), ns); \
    }                                                                                        \
    t_inside = false;                                                                        \
    return rc;                                                                               \
  }

#define USERPERF_OFFCPU_WRAP(ret, name, params, args) \
  USERPERF_OFFCPU_WRAPPER(ret, name, #name, params, nullptr, , , real args)
// A lock whose uncontended case returns from `try_lock` (an error code other than EBUSY, or 0):
// the lock itself, timed, only when it is held by another thread.
#define USERPERF_OFFCPU_WRAP_LOCK(name, params, args, try_lock)                              \
  USERPERF_OFFCPU_WRAPPER(int, name, #name, params, nullptr, ,                               \
                          if (const int tried = try_lock args; tried != EBUSY) return tried, \
                          real args)
// A wait whose sigset_t argument gets the clock signal added (signal_mask.hpp).
#define USERPERF_OFFCPU_WRAP_MASKED(ret, name, params, args) \
  USERPERF_OFFCPU_WRAPPER(ret, name, #name, params, nullptr, sigset_t copy, , real args)

// Sleeps.
USERPERF_OFFCPU_WRAP(int, nanosleep, (const timespec* req, timespec* rem), (req, rem))
USERPERF_OFFCPU_WRAP(int, clock_nanosleep,
                     (clockid_t clock, int flags, const timespec* req, timespec* rem),
                     (clock, flags, req, rem))
USERPERF_OFFCPU_WRAP(int, usleep, (useconds_t usec), (usec))
USERPERF_OFFCPU_WRAP(unsigned int, sleep, (unsigned int seconds), (seconds))
// Descriptors and sockets.
USERPERF_OFFCPU_WRAP(ssize_t, read, (int fd, void* buf, size_t count), (fd, buf, count))
USERPERF_OFFCPU_WRAP(ssize_t, write, (int fd, const void* buf, size_t count), (fd, buf, count))
USERPERF_OFFCPU_WRAP(ssize_t, recv, (int fd, void* buf, size_t len, int flags),
                     (fd, buf, len, flags))
USERPERF_OFFCPU_WRAP(ssize_t, recvfrom,
                     (int fd, void* buf, size_t len, int flags, sockaddr* from, socklen_t* fromlen),
                     (fd, buf, len, flags, from, fromlen))
USERPERF_OFFCPU_WRAP(ssize_t, recvmsg, (int fd, msghdr* msg, int flags), (fd, msg, flags))
USERPERF_OFFCPU_WRAP(ssize_t, send, (int fd, const void* buf, size_t len, int flags),
                     (fd, buf, len, flags))
USERPERF_OFFCPU_WRAP(ssize_t, sendmsg, (int fd, const msghdr* msg, int flags), (fd, msg, flags))
USERPERF_OFFCPU_WRAP(int, accept, (int fd, sockaddr* addr, socklen_t* len), (fd, addr, len))
USERPERF_OFFCPU_WRAP(int, accept4, (int fd, sockaddr* addr, socklen_t* len, int flags),
                     (fd, addr, len, flags))
USERPERF_OFFCPU_WRAP(int, connect, (int fd, const sockaddr* addr, socklen_t len), (fd, addr, len))
// Waits for descriptors.
USERPERF_OFFCPU_WRAP(int, poll, (pollfd * fds, nfds_t nfds, int timeout), (fds, nfds, timeout))
USERPERF_OFFCPU_WRAP(int, select,
                     (int nfds, fd_set* readfds, fd_set* writefds, fd_set* exceptfds,
                      timeval* timeout),
                     (nfds, readfds, writefds, exceptfds, timeout))
USERPERF_OFFCPU_WRAP(int, epoll_wait, (int epfd, epoll_event* events, int maxevents, int timeout),
                     (epfd, events, maxevents, timeout))
// The waits with a signal mask: the clock signal is added to it (signal_mask.hpp,
// with_clock_signal), as signal_interpose.cpp does for sigsuspend.
USERPERF_OFFCPU_WRAP_MASKED(int, ppoll,
                            (pollfd * fds, nfds_t nfds, const timespec* timeout,
                             const sigset_t* mask),
                            (fds, nfds, timeout, with_clock_signal(mask, copy)))
USERPERF_OFFCPU_WRAP_MASKED(int, pselect,
                            (int nfds, fd_set* readfds, fd_set* writefds, fd_set* exceptfds,
                             const timespec* timeout, const sigset_t* mask),
                            (nfds, readfds, writefds, exceptfds, timeout,
                             with_clock_signal(mask, copy)))
USERPERF_OFFCPU_WRAP_MASKED(int, epoll_pwait,
                            (int epfd, epoll_event* events, int maxevents, int timeout,
                             const sigset_t* mask),
                            (epfd, events, maxevents, timeout, with_clock_signal(mask, copy)))
USERPERF_OFFCPU_WRAP_MASKED(int, epoll_pwait2,
                            (int epfd, epoll_event* events, int maxevents, const timespec* timeout,
                             const sigset_t* mask),
                            (epfd, events, maxevents, timeout, with_clock_signal(mask, copy)))
// Children.
USERPERF_OFFCPU_WRAP(pid_t, waitpid, (pid_t pid, int* status, int options), (pid, status, options))
USERPERF_OFFCPU_WRAP(pid_t, wait4, (pid_t pid, int* status, int options, rusage* usage),
                     (pid, status, options, usage))
USERPERF_OFFCPU_WRAP(pid_t, wait, (int* status), (status))
// Threads. pthread_cond_wait and pthread_cond_timedwait: libc has two of each, the default
// @GLIBC_2.3.2 and the old condition variable @GLIBC_2.2.5, and a program is linked to one. The
// agent's exports carry no version (agent.map), so they cannot be told apart here: the agent has
// one wrapper per version under names of its own, and libuserperf_condvar.so, preloaded before it
// with --off-cpu (condvar/condvar_versions.S), defines the four versioned symbols programs bind to,
// each a jump to its wrapper (so the wrapper's caller is still the program's call site).
#define USERPERF_OFFCPU_WRAP_VERSION(name, real_name, version, params, args) \
  USERPERF_OFFCPU_WRAPPER(int, name, real_name, params, version, , , real args)
USERPERF_OFFCPU_WRAP_VERSION(userperf_offcpu_cond_wait_2_3_2, "pthread_cond_wait", "GLIBC_2.3.2",
                             (pthread_cond_t * cond, pthread_mutex_t* mutex), (cond, mutex))
USERPERF_OFFCPU_WRAP_VERSION(userperf_offcpu_cond_wait_2_2_5, "pthread_cond_wait", "GLIBC_2.2.5",
                             (pthread_cond_t * cond, pthread_mutex_t* mutex), (cond, mutex))
USERPERF_OFFCPU_WRAP_VERSION(userperf_offcpu_cond_timedwait_2_3_2, "pthread_cond_timedwait",
                             "GLIBC_2.3.2",
                             (pthread_cond_t * cond, pthread_mutex_t* mutex,
                              const timespec* abstime),
                             (cond, mutex, abstime))
USERPERF_OFFCPU_WRAP_VERSION(userperf_offcpu_cond_timedwait_2_2_5, "pthread_cond_timedwait",
                             "GLIBC_2.2.5",
                             (pthread_cond_t * cond, pthread_mutex_t* mutex,
                              const timespec* abstime),
                             (cond, mutex, abstime))
// Mutexes and rwlocks try first: the uncontended lock costs a TLS load and a branch
// more (bench/offcpu_bench.sh). sem_wait does not (sem_trywait is no cancellation point).
USERPERF_OFFCPU_WRAP_LOCK(pthread_mutex_lock, (pthread_mutex_t * mutex), (mutex),
                          pthread_mutex_trylock)
USERPERF_OFFCPU_WRAP(int, pthread_mutex_timedlock,
                     (pthread_mutex_t * mutex, const timespec* abstime), (mutex, abstime))
USERPERF_OFFCPU_WRAP(int, pthread_mutex_clocklock,
                     (pthread_mutex_t * mutex, clockid_t clock, const timespec* abstime),
                     (mutex, clock, abstime))
USERPERF_OFFCPU_WRAP_LOCK(pthread_rwlock_rdlock, (pthread_rwlock_t * rwlock), (rwlock),
                          pthread_rwlock_tryrdlock)
USERPERF_OFFCPU_WRAP_LOCK(pthread_rwlock_wrlock, (pthread_rwlock_t * rwlock), (rwlock),
                          pthread_rwlock_trywrlock)
USERPERF_OFFCPU_WRAP(int, pthread_rwlock_timedrdlock,
                     (pthread_rwlock_t * rwlock, const timespec* abstime), (rwlock, abstime))
USERPERF_OFFCPU_WRAP(int, pthread_rwlock_timedwrlock,
                     (pthread_rwlock_t * rwlock, const timespec* abstime), (rwlock, abstime))
USERPERF_OFFCPU_WRAP(int, pthread_rwlock_clockrdlock,
                     (pthread_rwlock_t * rwlock, clockid_t clock, const timespec* abstime),
                     (rwlock, clock, abstime))
USERPERF_OFFCPU_WRAP(int, pthread_rwlock_clockwrlock,
                     (pthread_rwlock_t * rwlock, clockid_t clock, const timespec* abstime),
                     (rwlock, clock, abstime))
USERPERF_OFFCPU_WRAP(int, pthread_cond_clockwait,
                     (pthread_cond_t * cond, pthread_mutex_t* mutex, clockid_t clock,
                      const timespec* abstime),
                     (cond, mutex, clock, abstime))
USERPERF_OFFCPU_WRAP(int, sem_wait, (sem_t * sem), (sem))
USERPERF_OFFCPU_WRAP(int, sem_timedwait, (sem_t * sem, const timespec* abstime), (sem, abstime))
USERPERF_OFFCPU_WRAP(int, sem_clockwait, (sem_t * sem, clockid_t clock, const timespec* abstime),
                     (sem, clock, abstime))
USERPERF_OFFCPU_WRAP(int, pthread_join, (pthread_t thread, void** value), (thread, value))
USERPERF_OFFCPU_WRAP(int, pthread_timedjoin_np,
                     (pthread_t thread, void** value, const timespec* abstime),
                     (thread, value, abstime))
USERPERF_OFFCPU_WRAP(int, pthread_clockjoin_np,
                     (pthread_t thread, void** value, clockid_t clock, const timespec* abstime),
                     (thread, value, clock, abstime))
USERPERF_OFFCPU_WRAP(int, pthread_barrier_wait, (pthread_barrier_t * barrier), (barrier))
