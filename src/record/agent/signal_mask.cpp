#include "record/agent/signal_mask.hpp"

#include <pthread.h>

#include <atomic>

#include "pmu/clock/clock_timer.hpp"
#include "pmu/internal_thread.hpp"
#include "record/agent/real_function.hpp"

namespace userperf::record::agent {
namespace {

std::atomic<bool> g_guarding{false};
// Initial-exec: read from the mask wrappers, which signal handlers may call (the agent is
// preloaded, so its TLS is static).
__attribute__((tls_model("initial-exec"))) thread_local bool t_program_blocks = false;

using SigMask = int (*)(int, const sigset_t*, sigset_t*);

// glibc's own pthread_sigmask (it keeps its internal signals out of every mask), resolved when the
// agent loads: it is called from signal handlers, where dlsym is not safe.
SigMask g_real_mask = nullptr;

__attribute__((constructor)) void resolve_real_mask() {
  resolve_real(g_real_mask, "pthread_sigmask");
}

// Changes the kernel's mask of the calling thread for the clock signal alone.
void set_clock_blocked(bool blocked) {
  resolve_real_mask();
  sigset_t clock;
  sigemptyset(&clock);
  sigaddset(&clock, pmu::clock_signal());
  g_real_mask(blocked ? SIG_BLOCK : SIG_UNBLOCK, &clock, nullptr);
}

}  // namespace

void guard_clock_signal() {
  resolve_real_mask();
  sigset_t current;
  if (g_real_mask(SIG_SETMASK, nullptr, &current) == 0 &&
      sigismember(&current, pmu::clock_signal()) == 1) {
    t_program_blocks = true;
    set_clock_blocked(false);
  }
  g_guarding.store(true, std::memory_order_release);
}

bool guarding_clock_signal() {
  return g_guarding.load(std::memory_order_acquire) && !pmu::creating_internal_thread();
}

bool program_blocks_clock_signal() {
  return t_program_blocks;
}

void set_program_blocks_clock_signal(bool blocked) {
  t_program_blocks = blocked;
}

void show_program_view(sigset_t& mask) {
  if (t_program_blocks) {
    sigaddset(&mask, pmu::clock_signal());
  } else {
    sigdelset(&mask, pmu::clock_signal());
  }
}

void adopt_thread_mask(bool creator_blocks) {
  t_program_blocks = creator_blocks;
  set_clock_blocked(false);
}

ProgramMaskForExec::ProgramMaskForExec() {
  if (!g_guarding.load(std::memory_order_acquire) || !t_program_blocks) return;
  blocked_ = true;
  set_clock_blocked(true);
}

ProgramMaskForExec::~ProgramMaskForExec() {
  if (blocked_) set_clock_blocked(false);
}

ClockSignalBlocked::ClockSignalBlocked() {
  resolve_real_mask();
  sigset_t clock_only;
  sigemptyset(&clock_only);
  sigaddset(&clock_only, pmu::clock_signal());
  g_real_mask(SIG_BLOCK, &clock_only, &old_);
}

ClockSignalBlocked::~ClockSignalBlocked() {
  g_real_mask(SIG_SETMASK, &old_, nullptr);
}

bool ClockSignalBlocked::was_blocked() const {
  return sigismember(&old_, pmu::clock_signal()) == 1;
}

}  // namespace userperf::record::agent
