// The log C API (include/userperf/log.h) over the log PMU; errors become -1 + errno.
#include "userperf/log.h"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <vector>

#include "api/engine_instance.hpp"
#include "core/engine.hpp"
#include "pmu/aux_sources/log_pmu.hpp"
#include "support/expected.hpp"

namespace {

using userperf::pmu::LogPmu;

using userperf::syscall_return;

constexpr std::array<int, 5> kCrashSignals = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
std::array<struct sigaction, kCrashSignals.size()> g_previous{};
std::mutex g_install_mutex;
bool g_installed = false;

void crash_handler(int signo, siginfo_t*, void*) {
  LogPmu::dump_for_crash();
  for (std::size_t i = 0; i < kCrashSignals.size(); ++i) {
    if (kCrashSignals[i] == signo) sigaction(signo, &g_previous[i], nullptr);
  }
  // Blocked while this handler runs: delivered to the previous disposition once it returns (a
  // fault would also recur when the faulting instruction runs again).
  raise(signo);
}

int install_crash_handlers() {
  std::lock_guard lock(g_install_mutex);
  if (g_installed) return 0;
  struct sigaction sa {};
  sa.sa_sigaction = crash_handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (std::size_t i = 0; i < kCrashSignals.size(); ++i) {
    if (sigaction(kCrashSignals[i], &sa, &g_previous[i]) != 0) {
      const int err = errno;
      for (std::size_t j = 0; j < i; ++j) sigaction(kCrashSignals[j], &g_previous[j], nullptr);
      return -err;
    }
  }
  g_installed = true;
  return 0;
}

}  // namespace

extern "C" {

int userperf_log_write(int fd, const void* data, size_t len) {
  return syscall_return(LogPmu::write(fd, data, len));
}

int userperf_log_thread_write(const void* data, size_t len) {
  return syscall_return(LogPmu::write_thread(data, len));
}

int userperf_log_printf(int fd, const char* format, ...) {
  char text[1024];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  if (n < 0) return -1;
  const std::size_t len =
      static_cast<std::size_t>(n) < sizeof text ? static_cast<std::size_t>(n) : sizeof text - 1;
  return syscall_return(LogPmu::write(fd, text, len));
}

int userperf_log_dump(int fd, int out_fd) {
  const std::int64_t size = LogPmu::area_size(fd);
  if (size < 0) return syscall_return(static_cast<int>(size));
  std::vector<std::uint8_t> bytes;
  try {
    bytes.resize(static_cast<std::size_t>(size));
  } catch (const std::bad_alloc&) {
    return syscall_return(-ENOMEM);
  }
  const ssize_t n = userperf::api::engine().aux_snapshot(fd, bytes.data(), bytes.size(), nullptr);
  if (n < 0) return syscall_return(static_cast<int>(n));
  std::size_t done = 0;
  while (done < static_cast<std::size_t>(n)) {
    const ssize_t w = write(out_fd, bytes.data() + done, static_cast<std::size_t>(n) - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    done += static_cast<std::size_t>(w);
  }
  return 0;
}

int userperf_log_dump_on_crash(int fd, int out_fd) {
  if (const int rc = LogPmu::set_crash_fd(fd, out_fd); rc != 0) return syscall_return(rc);
  return syscall_return(out_fd >= 0 ? install_crash_handlers() : 0);
}

}  // extern "C"
