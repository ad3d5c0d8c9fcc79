#include "core/output_guard.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <mutex>

#include "support/fork_sequence.hpp"
#include "support/process_barrier.hpp"
#include "support/task_ids.hpp"

namespace userperf::core {

namespace detail {

__attribute__((tls_model("initial-exec"))) constinit thread_local ReaderSlot* t_reader = nullptr;
constinit std::atomic<std::uint64_t> g_entry_state{1};
constinit std::atomic<unsigned> g_epoch{0};
constinit std::atomic<std::uint64_t> g_readers[2] = {};

namespace {

// Threads that write at once; a thread beyond them takes the shared counters.
constexpr std::size_t kSlots = 1024;
constinit std::array<ReaderSlot, kSlots> g_slots{};
constinit std::mutex g_wait_mutex;  // one synchronize() at a time: the epoch and phase are global

bool thread_is_gone(pid_t tid) {
  const int saved = errno;  // a signal handler's caller keeps its errno
  const bool gone = syscall(SYS_tgkill, support::current_pid(), tid, 0) != 0 && errno == ESRCH;
  errno = saved;
  return gone;
}

ReaderSlot* take(ReaderSlot& slot, pid_t expected, pid_t tid) {
  if (!slot.tid.compare_exchange_strong(expected, tid, std::memory_order_acq_rel)) return nullptr;
  std::atomic_ref<std::uint64_t>(slot.state).store(0, std::memory_order_relaxed);
  t_reader = &slot;
  return &slot;
}

// A fork child has one thread: every other slot is free again, and the shared counters hold none
// of its writers. The forking thread keeps its slot (it is not in a read section: fork is not
// called from the write path), under its new id.
void reset_slots_in_child() {
  g_readers[0].store(0, std::memory_order_relaxed);
  g_readers[1].store(0, std::memory_order_relaxed);
  for (ReaderSlot& slot : g_slots) {
    if (&slot == t_reader) continue;
    slot.tid.store(0, std::memory_order_relaxed);
    std::atomic_ref<std::uint64_t>(slot.state).store(0, std::memory_order_relaxed);
  }
  if (t_reader != nullptr) t_reader->tid.store(support::current_tid(), std::memory_order_relaxed);
}
[[maybe_unused]] const bool g_fork_hooks =
    (support::set_fork_hooks(support::ForkStage::kCore, {.child = reset_slots_in_child}), true);

}  // namespace

ReaderSlot* claim_reader_slot() {
  if (!support::process_barrier_available()) return nullptr;
  const pid_t tid = support::current_tid();
  for (ReaderSlot& slot : g_slots) {
    if (slot.tid.load(std::memory_order_relaxed) == 0) {
      if (ReaderSlot* mine = take(slot, 0, tid)) return mine;
    }
  }
  // Full: slots of threads that have exited (their nest count is 0: nobody exits mid-write).
  for (ReaderSlot& slot : g_slots) {
    const pid_t owner = slot.tid.load(std::memory_order_relaxed);
    if (owner != 0 && owner != tid && thread_is_gone(owner)) {
      if (ReaderSlot* mine = take(slot, owner, tid)) return mine;
    }
  }
  return nullptr;
}

}  // namespace detail

void GracePeriod::synchronize() {
  std::lock_guard lock(detail::g_wait_mutex);
  // Writers on the shared counters that entered before the flip counted themselves in the old
  // slot; later ones see the unpublished pointers. Flip twice so both slots have drained once
  // since the caller unpublished.
  for (int round = 0; round < 2; ++round) {
    const unsigned old = detail::g_epoch.fetch_add(1, std::memory_order_seq_cst) & 1;
    while (detail::g_readers[old].load(std::memory_order_seq_cst) != 0) sched_yield();
  }
  if (!support::process_barrier_available()) return;
  // Every writer thread either made its entry visible before the barrier or loads the pointers
  // the caller unpublished after it.
  support::process_barrier();
  const std::uint64_t phase =
      detail::g_entry_state.fetch_xor(detail::kPhase, std::memory_order_seq_cst) ^ detail::kPhase;
  for (detail::ReaderSlot& slot : detail::g_slots) {
    if (slot.tid.load(std::memory_order_acquire) == 0) continue;
    const std::atomic_ref<std::uint64_t> state(slot.state);
    for (;;) {
      const std::uint64_t now = state.load(std::memory_order_acquire);
      // Out of every section, or in one entered after the flip (it saw the new pointers).
      if ((now & detail::kNestMask) == 0 || ((now ^ phase) & detail::kPhase) == 0) break;
      sched_yield();
    }
  }
}

}  // namespace userperf::core
