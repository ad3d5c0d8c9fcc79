// prctl(PR_SET_NAME) -> Comm. A file of its own: <sys/prctl.h> declares prctl with an exception
// specification, so this definition must not see it.
#include <dlfcn.h>
#include <linux/prctl.h>

#include <cstdarg>

#include "record/agent/session.hpp"
#include "record/agent/thread_events.hpp"

extern "C" __attribute__((visibility("default"))) int prctl(int option, ...) {
  // prctl takes up to four more arguments; reading all four is what glibc's wrapper does too.
  va_list args;
  va_start(args, option);
  const unsigned long arg2 = va_arg(args, unsigned long);
  const unsigned long arg3 = va_arg(args, unsigned long);
  const unsigned long arg4 = va_arg(args, unsigned long);
  const unsigned long arg5 = va_arg(args, unsigned long);
  va_end(args);
  using Prctl = int (*)(int, ...);
  static const auto real_prctl = reinterpret_cast<Prctl>(dlsym(RTLD_NEXT, "prctl"));
  const int rc = real_prctl(option, arg2, arg3, arg4, arg5);
  if (rc == 0 && option == PR_SET_NAME) {
    using namespace userperf::record::agent;
    if (current_session() != nullptr) {
      announce_comm(recorded_thread_id(pthread_self()), reinterpret_cast<const char*>(arg2));
    }
  }
  return rc;
}
