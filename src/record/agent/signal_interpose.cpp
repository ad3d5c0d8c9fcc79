// The signal-mask functions, wrapped so that the program cannot block the clock signal
// (signal_mask.hpp says why) while it reads back exactly the masks it set:
// - pthread_sigmask, sigprocmask: the clock signal is taken out of the mask installed; the
//   program's wish is kept per thread and shown in every old mask returned.
// - sigwait, sigwaitinfo, sigtimedwait, signalfd: the clock signal is taken out of the set, so
//   that none of them consumes it in place of the handler.
// - sigsuspend, pselect, ppoll, epoll_pwait, epoll_pwait2: the clock signal is added to the mask
//   held during the wait. A waiting thread uses no CPU time, so there is nothing to sample; a clock
//   signal that arrived then would only end the wait early (EINTR). It is delivered when the call
//   restores the thread's mask. The four waits on descriptors are offcpu_interpose.cpp's wrappers
//   (with_clock_signal), which also time them.
// A raw rt_sigprocmask (or glibc's internal calls) is not seen: the ticker counts what that loses.
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/signalfd.h>

#include <cerrno>

#include "pmu/clock/clock_timer.hpp"
#include "record/agent/real_function.hpp"
#include "record/agent/signal_mask.hpp"

namespace {

using userperf::pmu::clock_signal;
using namespace userperf::record::agent;

using userperf::record::agent::resolve_real;

using SigMask = int (*)(int, const sigset_t*, sigset_t*);
using SigWait = int (*)(const sigset_t*, int*);
using SigWaitInfo = int (*)(const sigset_t*, siginfo_t*);
using SigTimedWait = int (*)(const sigset_t*, siginfo_t*, const timespec*);
using SignalFd = int (*)(int, const sigset_t*, int);
using SigSuspend = int (*)(const sigset_t*);

// Resolved when the agent loads: the mask functions are async-signal-safe, dlsym is not.
struct RealSignal {
  SigMask pthread_sigmask = nullptr;
  SigMask sigprocmask = nullptr;
  SigWait sigwait = nullptr;
  SigWaitInfo sigwaitinfo = nullptr;
  SigTimedWait sigtimedwait = nullptr;
  SignalFd signalfd = nullptr;
  SigSuspend sigsuspend = nullptr;
};
RealSignal g_real;

__attribute__((constructor)) void resolve_real_signal() {
  resolve_real(g_real.pthread_sigmask, "pthread_sigmask");
  resolve_real(g_real.sigprocmask, "sigprocmask");
  resolve_real(g_real.sigwait, "sigwait");
  resolve_real(g_real.sigwaitinfo, "sigwaitinfo");
  resolve_real(g_real.sigtimedwait, "sigtimedwait");
  resolve_real(g_real.signalfd, "signalfd");
  resolve_real(g_real.sigsuspend, "sigsuspend");
}

// A mask change: `set` (may be null) with the clock signal taken out into `applied`, the program's
// wish for the clock signal after the change in `blocks`. False for an unknown `how` (the real
// call then reports EINVAL).
bool filter_change(int how, const sigset_t* set, sigset_t& applied, bool& blocks) {
  blocks = program_blocks_clock_signal();
  if (set == nullptr) return true;
  const bool member = sigismember(set, clock_signal()) == 1;
  switch (how) {
    case SIG_BLOCK:
      blocks = blocks || member;
      break;
    case SIG_UNBLOCK:
      blocks = blocks && !member;
      break;
    case SIG_SETMASK:
      blocks = member;
      break;
    default:
      return false;
  }
  applied = *set;
  if (how != SIG_UNBLOCK) sigdelset(&applied, clock_signal());
  return true;
}

// Both functions take the same arguments; pthread_sigmask returns the error, sigprocmask -1/errno.
template <class Real>
int change_mask(Real real, int how, const sigset_t* set, sigset_t* old, bool returns_error) {
  sigset_t applied;
  bool blocks = false;
  if (!guarding_clock_signal() || !filter_change(how, set, applied, blocks)) {
    return real(how, set, old);
  }
  const int rc = real(how, set == nullptr ? nullptr : &applied, old);
  const bool ok = returns_error ? rc == 0 : rc != -1;
  if (!ok) return rc;
  if (old != nullptr) show_program_view(*old);
  set_program_blocks_clock_signal(blocks);
  return rc;
}

// `set` without the clock signal, in `copy`; `set` itself when not guarding or null.
const sigset_t* without_clock(const sigset_t* set, sigset_t& copy) {
  if (set == nullptr || !guarding_clock_signal()) return set;
  copy = *set;
  sigdelset(&copy, clock_signal());
  return &copy;
}

// `mask` with the clock signal, in `copy`: held during a wait. A null mask means no change of
// mask, and stays null.
}  // namespace

namespace userperf::record::agent {

const sigset_t* with_clock_signal(const sigset_t* mask, sigset_t& copy) {
  if (mask == nullptr || !guarding_clock_signal()) return mask;
  copy = *mask;
  sigaddset(&copy, clock_signal());
  return &copy;
}

}  // namespace userperf::record::agent

namespace {
using userperf::record::agent::with_clock_signal;
}  // namespace

extern "C" {

__attribute__((visibility("default"))) int pthread_sigmask(int how, const sigset_t* set,
                                                           sigset_t* old) {
  return change_mask(resolve_real(g_real.pthread_sigmask, "pthread_sigmask"), how, set, old, true);
}

__attribute__((visibility("default"))) int sigprocmask(int how, const sigset_t* set,
                                                       sigset_t* old) {
  return change_mask(resolve_real(g_real.sigprocmask, "sigprocmask"), how, set, old, false);
}

__attribute__((visibility("default"))) int sigwait(const sigset_t* set, int* sig) {
  sigset_t copy;
  return resolve_real(g_real.sigwait, "sigwait")(without_clock(set, copy), sig);
}

__attribute__((visibility("default"))) int sigwaitinfo(const sigset_t* set, siginfo_t* info) {
  sigset_t copy;
  return resolve_real(g_real.sigwaitinfo, "sigwaitinfo")(without_clock(set, copy), info);
}

__attribute__((visibility("default"))) int sigtimedwait(const sigset_t* set, siginfo_t* info,
                                                        const timespec* timeout) {
  sigset_t copy;
  return resolve_real(g_real.sigtimedwait, "sigtimedwait")(without_clock(set, copy), info, timeout);
}

__attribute__((visibility("default"))) int signalfd(int fd, const sigset_t* mask, int flags) {
  sigset_t copy;
  return resolve_real(g_real.signalfd, "signalfd")(fd, without_clock(mask, copy), flags);
}

__attribute__((visibility("default"))) int sigsuspend(const sigset_t* mask) {
  sigset_t copy;
  return resolve_real(g_real.sigsuspend, "sigsuspend")(with_clock_signal(mask, copy));
}

}  // extern "C"
