// The clock signal stays deliverable whatever mask the program sets. Thread pools block every
// signal in their workers (xz's do: SigBlk fffffffe7ffbfeff), which would leave them unsampled. The
// agent's wrappers of the mask functions (signal_interpose.cpp) take the clock signal out of every
// mask the program installs and keep, per thread, whether the program meant it blocked: every mask
// the program reads back is the one it set. Blocking by a raw rt_sigprocmask is not seen here;
// the clock ticker notices it and counts those periods lost (clock_ticker.cpp).
#pragma once

#include <signal.h>

namespace userperf::record::agent {

// From the agent's start on (while recording, and after it goes idle: masks read back stay
// consistent): the wrappers filter. The calling thread's inherited mask (an exec'd image keeps
// the mask of the thread that called exec) is adopted: a blocked clock signal is unblocked and
// remembered as the program's.
void guard_clock_signal();

// Whether the wrappers filter: guard_clock_signal ran and the calling thread is not creating one
// of userperf's own threads (the ticker blocks every signal for real).
bool guarding_clock_signal();

// The calling thread's view: whether the program has the clock signal blocked.
bool program_blocks_clock_signal();
void set_program_blocks_clock_signal(bool blocked);

// The program's view of a mask: `mask` as the kernel has it, with the clock signal as the program
// set it.
void show_program_view(sigset_t& mask);

// The mask a sigsuspend, pselect, ppoll or epoll_pwait(2) holds during its wait: `mask` with the
// clock signal added, in `copy`, while guarding (a signal would only end the wait early).
// SIGNAL-SAFE.
const sigset_t* with_clock_signal(const sigset_t* mask, sigset_t& copy);

// A new thread: takes its creator's view (or its pthread attr's mask) and unblocks the clock
// signal for real.
void adopt_thread_mask(bool creator_blocks);

// The clock signal blocked on the calling thread for the agent's own critical sections (its
// handler follows forked clocks, takes periods and announces threads too). Through glibc's own
// pthread_sigmask: the agent's pthread_sigmask and sigprocmask are the wrappers, which keep the
// clock signal deliverable (an agent section blocking through them ran with the handler
// interrupting it) and would record the change as the program's. SIGNAL-SAFE.
class ClockSignalBlocked {
 public:
  ClockSignalBlocked();
  ~ClockSignalBlocked();
  ClockSignalBlocked(const ClockSignalBlocked&) = delete;
  ClockSignalBlocked& operator=(const ClockSignalBlocked&) = delete;
  // Whether the thread had it blocked before (a raw call of the program's).
  bool was_blocked() const;

 private:
  sigset_t old_;
};

// Around exec: the new image starts with the mask the program set (a program run without the agent
// must not find the signal unblocked). Restored when the exec fails.
class ProgramMaskForExec {
 public:
  ProgramMaskForExec();
  ~ProgramMaskForExec();
  ProgramMaskForExec(const ProgramMaskForExec&) = delete;
  ProgramMaskForExec& operator=(const ProgramMaskForExec&) = delete;

 private:
  bool blocked_ = false;
};

}  // namespace userperf::record::agent
