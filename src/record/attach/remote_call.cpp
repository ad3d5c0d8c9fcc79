#include "record/attach/remote_call.hpp"

#include <elf.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace userperf::record {
namespace {

// Below RSP the interrupted code may keep data of its own (the SysV red zone).
constexpr std::uint64_t kRedZone = 128;
constexpr std::uint64_t kEflagsTrap = 0x100;       // TF
constexpr std::uint64_t kEflagsDirection = 0x400;  // DF: clear at every call (SysV)
// Room for any XSAVE layout this CPU has (AVX-512 needs about 2.7 KiB).
constexpr std::size_t kXstateSize = 16384;

Error ptrace_error(const char* what, pid_t tid) {
  const int err = errno;
  return make_error(
      err, std::string(what) + " of thread " + std::to_string(tid) + ": " + std::strerror(err));
}

Error gone(pid_t pid) {
  return make_error(
      ESRCH, "process " + std::to_string(pid) + " exited or ran a new program (exec) meanwhile");
}

// The signals left deliverable during a call: the faults, which the kernel forces (a forced
// signal that is blocked resets the program's handler to SIG_DFL, so they must stay open).
std::uint64_t call_mask() {
  std::uint64_t mask = ~std::uint64_t{0};
  for (const int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS}) {
    mask &= ~(std::uint64_t{1} << (sig - 1));
  }
  return mask;
}

bool is_fault(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP ||
         sig == SIGSYS;
}

// process_vm_readv/writev of one range: true when all of it moved.
bool move_memory(pid_t pid, std::uint64_t address, void* local, std::size_t size, bool write) {
  iovec here{local, size};
  iovec there{reinterpret_cast<void*>(address), size};
  const ssize_t n = write ? process_vm_writev(pid, &here, 1, &there, 1, 0)
                          : process_vm_readv(pid, &here, 1, &there, 1, 0);
  return n == static_cast<ssize_t>(size);
}

// The thread's FPU/SSE/AVX state, whole (XSAVE layout, or FXSAVE where the kernel has no xstate).
struct FloatState {
  std::vector<std::uint8_t> xstate;
  user_fpregs_struct fpregs{};
  bool has_xstate = false;

  bool save(pid_t tid) {
    xstate.assign(kXstateSize, 0);
    iovec io{xstate.data(), xstate.size()};
    if (ptrace(PTRACE_GETREGSET, tid, NT_X86_XSTATE, &io) == 0) {
      xstate.resize(io.iov_len);
      has_xstate = true;
      return true;
    }
    return ptrace(PTRACE_GETFPREGS, tid, nullptr, &fpregs) == 0;
  }
  bool restore(pid_t tid) {
    if (!has_xstate) return ptrace(PTRACE_SETFPREGS, tid, nullptr, &fpregs) == 0;
    iovec io{xstate.data(), xstate.size()};
    return ptrace(PTRACE_SETREGSET, tid, NT_X86_XSTATE, &io) == 0;
  }
};

}  // namespace

Expected<std::unique_ptr<RemoteThread>> RemoteThread::stop(pid_t pid, pid_t tid) {
  std::unique_ptr<RemoteThread> thread(new RemoteThread(pid, tid));
  if (ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) return ptrace_error("PTRACE_SEIZE", tid);
  thread->attached_ = true;
  if (Expected<void> stopped = thread->interrupt_and_wait(); !stopped) return stopped.error();
  return thread;
}

RemoteThread::~RemoteThread() {
  // A stopped tracee: detaching lets it run on, the stop's signal (a call's SIGSEGV) suppressed.
  if (attached_) ptrace(PTRACE_DETACH, tid_, nullptr, nullptr);
}

Expected<int> RemoteThread::wait_stop() {
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(tid_, &status, __WALL);
    if (done < 0 && errno == EINTR) continue;
    if (done < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
      attached_ = false;  // nothing left to detach from
      return gone(pid_);
    }
    return status;
  }
}

Expected<void> RemoteThread::interrupt_and_wait() {
  if (ptrace(PTRACE_INTERRUPT, tid_, nullptr, nullptr) != 0) {
    return ptrace_error("PTRACE_INTERRUPT", tid_);
  }
  for (;;) {
    Expected<int> status = wait_stop();
    if (!status) return status.error();
    const int sig = WSTOPSIG(*status);
    if ((*status >> 16) == PTRACE_EVENT_STOP) {
      // Ours (SIGTRAP), or a group stop of the whole process (its stop signal).
      if (sig != SIGTRAP) {
        return make_error(EAGAIN, "process " + std::to_string(pid_) + " is stopped (job control, " +
                                      strsignal(sig) + "): continue it first (kill -CONT " +
                                      std::to_string(pid_) + ")");
      }
      break;
    }
    // A signal on its way to the thread: it goes on to the program's handler.
    if (ptrace(PTRACE_CONT, tid_, nullptr, reinterpret_cast<void*>(static_cast<long>(sig))) != 0) {
      return ptrace_error("PTRACE_CONT", tid_);
    }
  }
  if (ptrace(PTRACE_GETREGS, tid_, nullptr, &regs_) != 0)
    return ptrace_error("PTRACE_GETREGS", tid_);
  return {};
}

Expected<void> RemoteThread::run_for(unsigned microseconds) {
  if (ptrace(PTRACE_CONT, tid_, nullptr, nullptr) != 0) return ptrace_error("PTRACE_CONT", tid_);
  usleep(microseconds);
  return interrupt_and_wait();
}

Expected<std::uint64_t> RemoteThread::call(std::uint64_t function,
                                           const std::vector<RemoteArgument>& args) {
  if (args.size() > 6) return make_error(EINVAL, "a remote call takes at most 6 arguments");
  const user_regs_struct saved = regs_;
  FloatState floats;
  if (!floats.save(tid_)) return ptrace_error("saving the FPU state", tid_);
  std::uint64_t saved_mask = 0;
  if (ptrace(PTRACE_GETSIGMASK, tid_, sizeof saved_mask, &saved_mask) != 0) {
    return ptrace_error("PTRACE_GETSIGMASK", tid_);
  }

  // The strings, packed below the red zone; under them the return address 0.
  std::vector<std::uint8_t> block;
  std::vector<std::size_t> string_at(args.size(), 0);
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (const auto* text = std::get_if<std::string>(&args[i])) {
      string_at[i] = block.size();
      block.insert(block.end(), text->begin(), text->end());
      block.push_back(0);
    }
  }
  const std::uint64_t top = saved.rsp - kRedZone;
  const std::uint64_t data = (top - block.size()) & ~std::uint64_t{15};
  // 16-byte aligned before the call pushed its return address: RSP % 16 == 8 at entry.
  const std::uint64_t return_slot = data - 8;
  std::vector<std::uint8_t> old_bytes(top - return_slot);
  if (!move_memory(pid_, return_slot, old_bytes.data(), old_bytes.size(), false)) {
    return make_error(EFAULT, "cannot read the stack of thread " + std::to_string(tid_) +
                                  " below its stack pointer");
  }
  std::vector<std::uint8_t> new_bytes(old_bytes.size(), 0);  // the return address 0 first
  if (!block.empty())
    std::memcpy(new_bytes.data() + (data - return_slot), block.data(), block.size());
  if (!move_memory(pid_, return_slot, new_bytes.data(), new_bytes.size(), true)) {
    return make_error(EFAULT, "cannot write the stack of thread " + std::to_string(tid_));
  }

  user_regs_struct regs = saved;
  unsigned long long* const slots[6] = {&regs.rdi, &regs.rsi, &regs.rdx,
                                        &regs.rcx, &regs.r8,  &regs.r9};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto* value = std::get_if<std::uint64_t>(&args[i]);
    *slots[i] = value != nullptr ? *value : data + string_at[i];
  }
  regs.rip = function;
  regs.rsp = return_slot;
  regs.rax = 0;
  regs.orig_rax = ~std::uint64_t{0};  // no system call to restart on the way into the function
  regs.eflags &= ~(kEflagsTrap | kEflagsDirection);

  // From here on everything is put back, whatever happens.
  auto put_back = [&]() -> Expected<void> {
    const bool stack = move_memory(pid_, return_slot, old_bytes.data(), old_bytes.size(), true);
    const bool general = ptrace(PTRACE_SETREGS, tid_, nullptr, &saved) == 0;
    const bool fpu = floats.restore(tid_);
    const bool mask = ptrace(PTRACE_SETSIGMASK, tid_, sizeof saved_mask, &saved_mask) == 0;
    regs_ = saved;
    if (stack && general && fpu && mask) return {};
    return make_error(EIO, "could not put thread " + std::to_string(tid_) + " back as it was");
  };
  std::uint64_t mask = call_mask();
  if (ptrace(PTRACE_SETREGS, tid_, nullptr, &regs) != 0 ||
      ptrace(PTRACE_SETSIGMASK, tid_, sizeof mask, &mask) != 0 ||
      ptrace(PTRACE_CONT, tid_, nullptr, nullptr) != 0) {
    const Error error = ptrace_error("starting the call", tid_);
    if (Expected<void> back = put_back(); !back) return back.error();
    return error;
  }
  for (;;) {
    Expected<int> status = wait_stop();
    if (!status) return status.error();  // gone: nothing to put back
    const int sig = WSTOPSIG(*status);
    long resume_with = 0;
    if ((*status >> 16) == 0) {
      user_regs_struct now{};
      if (ptrace(PTRACE_GETREGS, tid_, nullptr, &now) != 0) {
        return ptrace_error("PTRACE_GETREGS", tid_);
      }
      if (sig == SIGSEGV && now.rip == 0) {
        if (Expected<void> back = put_back(); !back) return back.error();
        return now.rax;
      }
      if (is_fault(sig)) {
        const std::string where = std::to_string(now.rip);
        if (Expected<void> back = put_back(); !back) return back.error();
        return make_error(EFAULT, "the call in thread " + std::to_string(tid_) + " faulted (" +
                                      strsignal(sig) + " at " + where + ")");
      }
      resume_with = sig;  // not blocked (SIGKILL never stops): the program's
    }
    // A group stop (PTRACE_EVENT_STOP): the call goes on; the stop comes back after it.
    if (ptrace(PTRACE_CONT, tid_, nullptr, reinterpret_cast<void*>(resume_with)) != 0) {
      return ptrace_error("PTRACE_CONT", tid_);
    }
  }
}

std::string RemoteThread::read_string(std::uint64_t address, std::size_t max) const {
  std::string out;
  char chunk[256];
  while (out.size() < max) {
    // Never across a page end: the next page may be unmapped.
    const std::uint64_t to_page_end = 4096 - (address & 4095);
    const std::size_t n = std::min<std::size_t>(
        {sizeof chunk, static_cast<std::size_t>(to_page_end), max - out.size()});
    if (!move_memory(pid_, address, chunk, n, false)) break;
    const void* nul = std::memchr(chunk, 0, n);
    if (nul != nullptr) {
      out.append(chunk, static_cast<const char*>(nul) - chunk);
      break;
    }
    out.append(chunk, n);
    address += n;
  }
  return out;
}

}  // namespace userperf::record
