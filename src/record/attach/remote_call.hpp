// A function call made inside another process, the way a debugger's `call` is: one of its threads
// is seized and stopped with ptrace, its registers are pointed at the function (arguments in the
// SysV registers, strings copied onto its stack below the red zone, a return address of 0), it
// runs until the return faults at address 0, and then every register (general, x87/SSE/AVX), its
// signal mask and every stack byte the call used are put back before it goes on. jattach and
// gdb's `call` work the same way.
//
// While the call runs, the thread blocks every signal but the synchronous faults (a fault the
// kernel forces while blocked would reset the program's handler to SIG_DFL), so no handler of the
// program runs on top of the call and no asynchronous signal is lost: they stay pending until the
// mask is put back. A system call the stop interrupted is restarted afterwards as if nothing
// happened (the saved registers keep its restart state; the call runs with orig_rax = -1, which
// turns the kernel's restart logic off for it).
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "support/expected.hpp"

namespace userperf::record {

// One argument: an integer, or a string passed as a pointer to a NUL-terminated copy.
using RemoteArgument = std::variant<std::uint64_t, std::string>;

class RemoteThread {
 public:
  // Seizes thread `tid` of process `pid` and stops it (PTRACE_SEIZE, PTRACE_INTERRUPT). EPERM when
  // ptrace is refused, ESRCH when the thread is gone.
  static Expected<std::unique_ptr<RemoteThread>> stop(pid_t pid, pid_t tid);
  // Detaches, leaving the thread running where it was.
  ~RemoteThread();
  RemoteThread(const RemoteThread&) = delete;
  RemoteThread& operator=(const RemoteThread&) = delete;

  pid_t tid() const { return tid_; }
  // The registers as the thread stopped.
  const user_regs_struct& regs() const { return regs_; }

  // Lets the thread run about `microseconds` and stops it again (a search for a safe point).
  Expected<void> run_for(unsigned microseconds);

  // Calls `function` with up to six arguments and returns its RAX. Everything is put back, also on
  // failure, unless the process is gone. ESRCH: the process exited or exec'd during the call;
  // EFAULT: the call faulted elsewhere than at its return (its thread is put back as it was).
  Expected<std::uint64_t> call(std::uint64_t function, const std::vector<RemoteArgument>& args);

  // Reads a NUL-terminated string of the process (at most `max` bytes).
  std::string read_string(std::uint64_t address, std::size_t max = 4096) const;

 private:
  RemoteThread(pid_t pid, pid_t tid) : pid_(pid), tid_(tid) {}
  // Waits for the thread's next stop; the waitpid status.
  Expected<int> wait_stop();
  Expected<void> interrupt_and_wait();

  pid_t pid_;
  pid_t tid_;
  bool attached_ = false;
  user_regs_struct regs_{};
};

}  // namespace userperf::record
