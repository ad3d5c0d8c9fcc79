// A periodic signal to the calling thread from a POSIX timer (SIGEV_THREAD_ID): the "storm" that
// tests of signal-safe code run their loops under. Installs `handler` for `signo`, arms the timer
// every `period_ns` of `clock`; the destructor disarms and deletes it and restores the old action.
#pragma once

#include <signal.h>
#include <time.h>
#include <unistd.h>

namespace userperf::testing {

class ThreadSignalTimer {
 public:
  ThreadSignalTimer(int signo, void (*handler)(int), long period_ns,
                    clockid_t clock = CLOCK_MONOTONIC)
      : signo_(signo) {
    struct sigaction sa {};
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    if (sigaction(signo, &sa, &old_) != 0) return;
    installed_ = true;
    sigevent sev{};
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = signo;
    sev._sigev_un._tid = gettid();
    if (timer_create(clock, &sev, &timer_) != 0) return;
    created_ = true;
    const itimerspec every{{0, period_ns}, {0, period_ns}};
    armed_ = timer_settime(timer_, 0, &every, nullptr) == 0;
  }
  ~ThreadSignalTimer() {
    if (created_) {
      const itimerspec off{};
      timer_settime(timer_, 0, &off, nullptr);
      timer_delete(timer_);
    }
    if (installed_) sigaction(signo_, &old_, nullptr);
  }
  ThreadSignalTimer(const ThreadSignalTimer&) = delete;
  ThreadSignalTimer& operator=(const ThreadSignalTimer&) = delete;

  bool ok() const { return armed_; }

 private:
  int signo_;
  struct sigaction old_ {};
  timer_t timer_{};
  bool installed_ = false;
  bool created_ = false;
  bool armed_ = false;
};

}  // namespace userperf::testing
