// A grace period for the write path (what RCU gives the kernel): writers enter an OutputGuard
// before they load an event's buffer pointer; the engine, after unpublishing a buffer or an event,
// waits in synchronize() until every writer that might have seen it has left.
//
// Two implementations behind one interface, chosen per entry:
// - Per-thread read sections (the common case): each writing thread owns a slot in a process-wide
//   table and marks entry and exit with plain stores to it, no locked instruction; synchronize()
//   pays instead, with a process barrier (support/process_barrier.hpp) and a scan of the slots.
//   This is userspace RCU's "memb" flavour: a reader either stored its entry before the barrier
//   reached its thread (synchronize() then sees it and waits) or loads pointers after it (and sees
//   them unpublished). A phase bit, copied into a slot at its outermost entry, lets synchronize()
//   skip readers that entered after it began, so a thread that writes in a tight loop cannot
//   starve it. Nested entries (a signal handler interrupting a write on the same thread) only move
//   the nest count, and leave it as they found it.
// - Shared counters: where the process barrier is unavailable, or all slots are taken, a locked
//   increment of one of two counters that alternate so that new writers cannot starve
//   synchronize().
// Both are process-wide, shared by every instance of GracePeriod: synchronize() may wait for a
// writer of another instance, never misses one of its own, and a fork child (one thread, not in a
// section) starts both afresh instead of waiting for its parent's other threads.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>

namespace userperf::core {

namespace detail {

struct alignas(64) ReaderSlot {
  std::atomic<pid_t> tid{0};  // the thread that claimed it; 0: free
  // Written only by its thread (plain stores through atomic_ref): the nest count below kPhase,
  // and the phase of the grace period current at the outermost entry.
  std::uint64_t state = 0;
};

constexpr std::uint64_t kPhase = std::uint64_t{1} << 63;
constexpr std::uint64_t kNestMask = kPhase - 1;

// The calling thread's slot, nullptr until its first entry.
extern __attribute__((tls_model("initial-exec"))) constinit thread_local ReaderSlot* t_reader;
// kPhase or 0, plus 1: what an outermost entry stores.
extern std::atomic<std::uint64_t> g_entry_state;
// SIGNAL-SAFE. The calling thread's slot, claimed now; nullptr when the process barrier is not
// available or every slot is taken by a live thread.
ReaderSlot* claim_reader_slot();
// The shared counters: writers without a slot count themselves in g_readers[g_epoch & 1].
extern std::atomic<unsigned> g_epoch;
extern std::atomic<std::uint64_t> g_readers[2];

}  // namespace detail

class GracePeriod {
 public:
  // SIGNAL-SAFE. Returns the token leave() takes.
  unsigned enter() {
    detail::ReaderSlot* slot = detail::t_reader;
    if (slot == nullptr) slot = detail::claim_reader_slot();
    if (slot != nullptr) {
      std::atomic_ref<std::uint64_t> state(slot->state);
      const std::uint64_t now = state.load(std::memory_order_relaxed);
      state.store((now & detail::kNestMask) == 0
                      ? detail::g_entry_state.load(std::memory_order_acquire)
                      : now + 1,
                  std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);  // the process barrier does the rest
      return kPerThread;
    }
    const unsigned epoch = detail::g_epoch.load(std::memory_order_seq_cst) & 1;
    detail::g_readers[epoch].fetch_add(1, std::memory_order_seq_cst);
    return epoch;
  }
  void leave(unsigned token) {
    if (token == kPerThread) {
      std::atomic_signal_fence(std::memory_order_seq_cst);
      std::atomic_ref<std::uint64_t> state(detail::t_reader->state);
      state.store(state.load(std::memory_order_relaxed) - 1, std::memory_order_release);
      return;
    }
    detail::g_readers[token].fetch_sub(1, std::memory_order_seq_cst);
  }

  // Not from a signal handler, nor from inside an OutputGuard. Serialised process-wide.
  void synchronize();

 private:
  static constexpr unsigned kPerThread = 2;
};

class OutputGuard {
 public:
  explicit OutputGuard(GracePeriod& gp) : gp_(gp), token_(gp.enter()) {}
  ~OutputGuard() { gp_.leave(token_); }
  OutputGuard(const OutputGuard&) = delete;
  OutputGuard& operator=(const OutputGuard&) = delete;

 private:
  GracePeriod& gp_;
  unsigned token_;
};

}  // namespace userperf::core
