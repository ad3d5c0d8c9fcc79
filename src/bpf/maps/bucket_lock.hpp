// A spin lock that records its owning thread, for hash buckets and stack-map slots. It is a plain
// word (zero = unlocked) used through std::atomic_ref, so arrays of locks can live in zeroed map
// storage allocated at create. Programs run
// in signal handlers: one that interrupts the owner on the owner's own thread would spin forever,
// so a nested acquisition fails at once with -EBUSY (the kernel's htab_lock_bucket), and a
// program-side acquisition gives up after a deadline (as the kernel's rqspinlock times out), which
// breaks cycles between handlers on different threads. Consumer-side acquisitions wait.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>

namespace userperf::bpf {

enum class LockWait : std::uint8_t {
  kProgram,   // SIGNAL-SAFE: -EBUSY when nested on this thread or not acquired by the deadline
  kConsumer,  // spins, then yields, until acquired (-EBUSY only when nested on this thread)
};

class BucketLock {
 public:
  // 0 or -EBUSY.
  int lock(LockWait wait);
  // One attempt, never waits: 0 or -EBUSY.
  int try_lock();
  void unlock() { owner().store(0, std::memory_order_release); }

 private:
  static std::uintptr_t self() { return static_cast<std::uintptr_t>(pthread_self()); }
  std::atomic_ref<std::uintptr_t> owner() { return std::atomic_ref<std::uintptr_t>(owner_); }
  alignas(std::atomic_ref<std::uintptr_t>::required_alignment) std::uintptr_t owner_ = 0;
};

// Holds a BucketLock for a scope once acquired.
class BucketGuard {
 public:
  BucketGuard(BucketLock& lock, LockWait wait) : lock_(lock), status_(lock.lock(wait)) {}
  ~BucketGuard() {
    if (status_ == 0) lock_.unlock();
  }
  BucketGuard(const BucketGuard&) = delete;
  BucketGuard& operator=(const BucketGuard&) = delete;
  int status() const { return status_; }  // 0 when held, else -EBUSY

 private:
  BucketLock& lock_;
  int status_;
};

}  // namespace userperf::bpf
