#include "bpf/maps/bucket_lock.hpp"

#include <sched.h>
#include <time.h>

#include <cerrno>

namespace userperf::bpf {
namespace {

// The kernel's rqspinlock gives up after a quarter of a second (RES_DEF_TIMEOUT).
constexpr std::int64_t kProgramDeadlineNs = 250'000'000;
constexpr unsigned kSpinsBetweenChecks = 1024;

std::int64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe, answered by the vDSO
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

int BucketLock::try_lock() {
  std::uintptr_t expected = 0;
  return owner().compare_exchange_strong(expected, self(), std::memory_order_acquire,
                                         std::memory_order_relaxed)
             ? 0
             : -EBUSY;
}

int BucketLock::lock(LockWait wait) {
  const std::uintptr_t me = self();
  // Only this thread can have stored its own id, so seeing it means the interrupted code on this
  // thread holds the lock and cannot run until we return.
  if (owner().load(std::memory_order_relaxed) == me) return -EBUSY;
  std::int64_t deadline = 0;
  for (unsigned spins = 0;; ++spins) {
    std::uintptr_t expected = 0;
    if (owner().load(std::memory_order_relaxed) == 0 &&
        owner().compare_exchange_weak(expected, me, std::memory_order_acquire,
                                      std::memory_order_relaxed)) {
      return 0;
    }
    cpu_relax();
    if (spins % kSpinsBetweenChecks != kSpinsBetweenChecks - 1) continue;
    if (wait == LockWait::kConsumer) {
      sched_yield();  // the owner may be preempted on this 2-CPU class of machine
      continue;
    }
    if (deadline == 0) {
      deadline = monotonic_ns() + kProgramDeadlineNs;
    } else if (monotonic_ns() > deadline) {
      return -EBUSY;
    }
  }
}

}  // namespace userperf::bpf
