// The exec family, wrapped so that no clock signal survives into the new image. execve keeps the
// calling thread's pending signals, and the new image has no handler for the clock signal until
// its agent opens a clock: a signal the clock ticker queued just before the exec would kill it
// (the default action of a real-time signal). Setting the signal to SIG_IGN discards what is
// pending and what the ticker sends until the exec; the new image's agent installs its handler
// again, and the disposition is restored when the exec fails; the ticker is then told that signals
// it sent meanwhile were discarded, or it would wait for their delivery and never signal those
// threads again. A program run without the agent inherits the ignored disposition of that one
// signal (SIGRTMIN + 4 unless USERPERF_SIGNAL). The new image also starts with the mask the program
// set (signal_mask.hpp: the agent keeps the clock signal unblocked whatever the program asked).
//
// Every variant is wrapped: glibc's execl, execvp... call execve internally, not through the
// symbol the agent interposes. A file of its own: <unistd.h> declares these with exception
// specifications.
#include <alloca.h>
#include <dlfcn.h>
#include <signal.h>

#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include "pmu/clock/clock_ticker.hpp"
#include "pmu/clock/clock_timer.hpp"
#include "record/agent/real_function.hpp"
#include "record/agent/session.hpp"
#include "record/agent/signal_mask.hpp"
#include "record/agent/thread_events.hpp"
#include "record/exec_target.hpp"
#include "record/protocol.hpp"

namespace {

// Ignores the clock signal for its lifetime while the agent records (its handler is installed).
class ClockSignalQuiet {
 public:
  ClockSignalQuiet() {
    if (userperf::record::agent::current_session() == nullptr) return;
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    active_ = sigaction(userperf::pmu::clock_signal(), &ignore, &saved_) == 0;
  }
  ~ClockSignalQuiet() {  // only reached when the exec failed
    if (!active_) return;
    const int saved_errno = errno;
    sigaction(userperf::pmu::clock_signal(), &saved_, nullptr);
    // After the handler is back: a signal sent from here on is delivered and counted.
    userperf::pmu::ticker_signals_discarded();
    errno = saved_errno;
  }
  ClockSignalQuiet(const ClockSignalQuiet&) = delete;
  ClockSignalQuiet& operator=(const ClockSignalQuiet&) = delete;

 private:
  struct sigaction saved_ {};
  bool active_ = false;
};

// Every exec of a process the recorder heard of is announced to it first (ExecNoticeMessage),
// after the clock signal is quieted: no sample can then make the recorder hear of the process
// between this check and the exec. The
// connection's end that follows is then the image's. A program the agent cannot enter
// (exec_target.hpp) is named at the end, so its exec makes a process the recorder has not heard
// of yet say Hello first. Announced again if the exec fails and this image goes on.
class ExecNotice {
 public:
  // `file` as execvp takes it when `search` (PATH lookup), else a path; `envp` the new
  // environment.
  ExecNotice(const char* file, bool search, char* const envp[]) {
    userperf::record::agent::Session* session = userperf::record::agent::current_session();
    if (session == nullptr) return;
    using userperf::record::ExecTarget;
    char path[sizeof message_.path];
    if (!userperf::record::resolve_command(file, search ? getenv("PATH") : nullptr, path,
                                           sizeof path)) {
      return;  // the exec fails with ENOENT
    }
    ExecTarget target = userperf::record::check_exec_env(envp, agent_path());
    if (target == ExecTarget::kEnterable) {
      target = userperf::record::check_exec_file(path, geteuid(), getegid());
    }
    message_.pid = getpid();
    message_.target = static_cast<std::uint32_t>(target);
    std::memcpy(message_.path, path, sizeof path);
    const bool must_name = target != ExecTarget::kEnterable && target != ExecTarget::kUnknown;
    // What this image's threads counted, before it is replaced (a failed exec's image says again
    // later).
    userperf::record::agent::send_all_counts(*session, false);
    sent_ = userperf::record::agent::send_exec_notice(*session, message_, must_name);
  }
  ~ExecNotice() {  // only reached when the exec failed
    userperf::record::agent::Session* session = userperf::record::agent::current_session();
    if (!sent_ || session == nullptr) return;
    const int saved_errno = errno;
    message_.failed = 1;
    userperf::record::agent::send_exec_notice(*session, message_, true);
    errno = saved_errno;
  }
  ExecNotice(const ExecNotice&) = delete;
  ExecNotice& operator=(const ExecNotice&) = delete;

 private:
  // The agent's own file, as the loader mapped it (what LD_PRELOAD names).
  static const char* agent_path() {
    static char path[512];
    if (path[0] == '\0') {
      Dl_info info{};
      if (dladdr(reinterpret_cast<void*>(&agent_path), &info) != 0 && info.dli_fname != nullptr &&
          std::strlen(info.dli_fname) < sizeof path) {
        std::strcpy(path, info.dli_fname);
      }
    }
    return path;
  }

  userperf::record::ExecNoticeMessage message_;
  bool sent_ = false;
};

using ExecVe = int (*)(const char*, char* const*, char* const*);
using ExecV = int (*)(const char*, char* const*);
using FExecVe = int (*)(int, char* const*, char* const*);

// The real functions, resolved when the agent loads: a wrapper may run in a signal handler
// (execve is async-signal-safe), where dlsym is not. A wrapper called before that (from an
// earlier library's constructor) resolves its function itself.
struct RealExec {
  ExecVe execve = nullptr;
  ExecV execv = nullptr;
  ExecV execvp = nullptr;
  ExecVe execvpe = nullptr;
  FExecVe fexecve = nullptr;
};
RealExec g_real;

using userperf::record::agent::resolve_real;

__attribute__((constructor)) void resolve_real_exec() {
  resolve_real(g_real.execve, "execve");
  resolve_real(g_real.execv, "execv");
  resolve_real(g_real.execvp, "execvp");
  resolve_real(g_real.execvpe, "execvpe");
  resolve_real(g_real.fexecve, "fexecve");
}

// How many arguments an execl-style call passes after `first`, the terminating NULL not counted.
std::size_t count_after(va_list args) {
  std::size_t n = 0;
  while (va_arg(args, char*) != nullptr) ++n;
  return n;
}

// Fills argv (n + 2 slots: first, the n after it, NULL) from the arguments; for execle the
// environment pointer after the NULL.
void collect(char** argv, const char* first, std::size_t n, va_list args, char*** envp) {
  argv[0] = const_cast<char*>(first);
  for (std::size_t i = 1; i <= n; ++i) argv[i] = va_arg(args, char*);
  argv[n + 1] = va_arg(args, char*);  // the NULL
  if (envp != nullptr) *envp = va_arg(args, char**);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int execve(const char* path, char* const argv[],
                                                  char* const envp[]) {
  ClockSignalQuiet quiet;
  ExecNotice notice(path, false, envp);
  userperf::record::agent::ProgramMaskForExec mask;  // after quiet: undone first
  return resolve_real(g_real.execve, "execve")(path, argv, envp);
}

__attribute__((visibility("default"))) int execv(const char* path, char* const argv[]) {
  ClockSignalQuiet quiet;
  ExecNotice notice(path, false, environ);
  userperf::record::agent::ProgramMaskForExec mask;  // after quiet: undone first
  return resolve_real(g_real.execv, "execv")(path, argv);
}

__attribute__((visibility("default"))) int execvp(const char* file, char* const argv[]) {
  ClockSignalQuiet quiet;
  ExecNotice notice(file, true, environ);
  userperf::record::agent::ProgramMaskForExec mask;  // after quiet: undone first
  return resolve_real(g_real.execvp, "execvp")(file, argv);
}

__attribute__((visibility("default"))) int execvpe(const char* file, char* const argv[],
                                                   char* const envp[]) {
  ClockSignalQuiet quiet;
  ExecNotice notice(file, true, envp);
  userperf::record::agent::ProgramMaskForExec mask;  // after quiet: undone first
  return resolve_real(g_real.execvpe, "execvpe")(file, argv, envp);
}

__attribute__((visibility("default"))) int fexecve(int fd, char* const argv[], char* const envp[]) {
  char fd_path[32];
  std::snprintf(fd_path, sizeof fd_path, "/proc/self/fd/%d", fd);
  ClockSignalQuiet quiet;
  ExecNotice notice(fd_path, false, envp);
  userperf::record::agent::ProgramMaskForExec mask;  // after quiet: undone first
  return resolve_real(g_real.fexecve, "fexecve")(fd, argv, envp);
}

// The execl family builds argv on the stack, as glibc's own does (no allocation: execle is
// async-signal-safe).
#define USERPERF_COLLECT_ARGS(first, argv, envp)                      \
  va_list args;                                                       \
  va_start(args, first);                                              \
  va_list counting;                                                   \
  va_copy(counting, args);                                            \
  const std::size_t n = count_after(counting);                        \
  va_end(counting);                                                   \
  auto** argv = static_cast<char**>(alloca((n + 2) * sizeof(char*))); \
  collect(argv, first, n, args, envp);                                \
  va_end(args)

__attribute__((visibility("default"))) int execl(const char* path, const char* arg, ...) {
  USERPERF_COLLECT_ARGS(arg, argv, nullptr);
  return execv(path, argv);
}

__attribute__((visibility("default"))) int execlp(const char* file, const char* arg, ...) {
  USERPERF_COLLECT_ARGS(arg, argv, nullptr);
  return execvp(file, argv);
}

__attribute__((visibility("default"))) int execle(const char* path, const char* arg, ...) {
  char** envp = nullptr;
  USERPERF_COLLECT_ARGS(arg, argv, &envp);
  return execve(path, argv, envp);
}

#undef USERPERF_COLLECT_ARGS

}  // extern "C"
