// The exec family, wrapped so that no clock signal survives into the new image. execve keeps the
// calling thread's pending signals, and the new image has no handler for the clock signal until
// its agent opens a clock: a signal the clock ticker queued just before the exec would kill it
// (the default action of a real-time signal). Setting the signal to SIG_IGN discards what is
// pending and what the ticker sends until the exec; the new image's agent installs its handler
// again, and the disposition is restored when the exec fails; the ticker is then told that signals
// it sent meanwhile were discarded, or it would wait for their delivery and never signal those
// threads again. A program run without the agent inherits the ignored disposition of that one
// signal (SIGRTMIN + 4 unless USERPERF_SIGNAL).
//
// Every variant is wrapped: glibc's execl, execvp... call execve internally, not through the
// symbol the agent interposes. A file of its own: <unistd.h> declares these with exception
// specifications.
#include <dlfcn.h>
#include <signal.h>

#include <cerrno>
#include <cstdarg>
#include <vector>

#include "pmu/clock_ticker.hpp"
#include "pmu/clock_timer.hpp"
#include "record/agent/session.hpp"

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

template <class Function>
Function real(const char* name) {
  return reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

using ExecVe = int (*)(const char*, char* const*, char* const*);
using ExecV = int (*)(const char*, char* const*);

// The arguments of an execl-style call after `first`, up to and including the NULL; for execle the
// environment pointer after it.
std::vector<char*> collect(const char* first, va_list args, char*** envp) {
  std::vector<char*> argv{const_cast<char*>(first)};
  while (argv.back() != nullptr) argv.push_back(va_arg(args, char*));
  if (envp != nullptr) *envp = va_arg(args, char**);
  return argv;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int execve(const char* path, char* const argv[],
                                                  char* const envp[]) {
  static const auto real_execve = real<ExecVe>("execve");
  ClockSignalQuiet quiet;
  return real_execve(path, argv, envp);
}

__attribute__((visibility("default"))) int execv(const char* path, char* const argv[]) {
  static const auto real_execv = real<ExecV>("execv");
  ClockSignalQuiet quiet;
  return real_execv(path, argv);
}

__attribute__((visibility("default"))) int execvp(const char* file, char* const argv[]) {
  static const auto real_execvp = real<ExecV>("execvp");
  ClockSignalQuiet quiet;
  return real_execvp(file, argv);
}

__attribute__((visibility("default"))) int execvpe(const char* file, char* const argv[],
                                                   char* const envp[]) {
  static const auto real_execvpe = real<ExecVe>("execvpe");
  ClockSignalQuiet quiet;
  return real_execvpe(file, argv, envp);
}

__attribute__((visibility("default"))) int fexecve(int fd, char* const argv[], char* const envp[]) {
  using FExecVe = int (*)(int, char* const*, char* const*);
  static const auto real_fexecve = real<FExecVe>("fexecve");
  ClockSignalQuiet quiet;
  return real_fexecve(fd, argv, envp);
}

__attribute__((visibility("default"))) int execl(const char* path, const char* arg, ...) {
  va_list args;
  va_start(args, arg);
  std::vector<char*> argv = collect(arg, args, nullptr);
  va_end(args);
  return execv(path, argv.data());
}

__attribute__((visibility("default"))) int execlp(const char* file, const char* arg, ...) {
  va_list args;
  va_start(args, arg);
  std::vector<char*> argv = collect(arg, args, nullptr);
  va_end(args);
  return execvp(file, argv.data());
}

__attribute__((visibility("default"))) int execle(const char* path, const char* arg, ...) {
  va_list args;
  va_start(args, arg);
  char** envp = nullptr;
  std::vector<char*> argv = collect(arg, args, &envp);
  va_end(args);
  return execve(path, argv.data(), envp);
}

}  // extern "C"
