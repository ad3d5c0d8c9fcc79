#include "pmu/thread_id.hpp"

#include <pthread.h>
#include <unistd.h>

namespace userperf::pmu {

namespace {

__attribute__((tls_model("initial-exec"))) constinit thread_local pid_t t_tid = 0;

// The thread that forks continues in the child under a new id.
void forget_tid_in_child() {
  t_tid = 0;
}

[[maybe_unused]] const int g_atfork = pthread_atfork(nullptr, nullptr, forget_tid_in_child);

}  // namespace

pid_t cached_tid() {
  return t_tid;
}

pid_t current_tid() {
  if (t_tid == 0) t_tid = gettid();
  return t_tid;
}

}  // namespace userperf::pmu
