// The signal-safe write path. See output_handle.hpp for the contract and data_ring.hpp for state.
//
// Single-writer discipline (the kernel's perf_output_begin / perf_output_put_handle, whose buffer
// is only written on its CPU): the owner thread counts itself in nest_ and reserves with an
// unlocked compare-and-swap of head_; a signal handler that interrupts it on the same thread is a
// nested writer, which reserves after it and does not publish. The outermost writer publishes
// head_ as data_head, drops the nest count, and publishes again if a handler moved head_ in
// between. No locked instruction is taken on the way.
//
// Shared discipline: a writer enters by incrementing writers_ *before* it reserves, and leaves by
// decrementing it after its last store. The writer that takes writers_ to 0 reads head_, checks
// that writers_ is still 0, and only then publishes that head: every record below that head was
// reserved by a writer that entered before the read, so had it not finished, writers_ would not be
// 0. This is the same nest counter and re-check loop made multi-producer. data_head is advanced
// with a compare-and-swap that never moves it backwards, because two writers leaving on different
// threads may publish in either order.
//
// From one to the other (make_shared): a non-owner stores owner_ = 0, runs a process barrier and
// waits for nest_ to be 0. The owner stores its nest count before it loads owner_ (enter_local, and
// leave_local when it re-publishes), so either the barrier made that store visible to the waiter
// or the owner's load sees owner_ = 0 and it backs out. After that every writer is shared.
#include "ring/output_handle.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "ring/local_ops.hpp"
#include "support/descriptors.hpp"
#include "support/process_barrier.hpp"
#include "support/task_ids.hpp"

namespace userperf::ring {

// ---- choosing the discipline ------------------------------------------------------------------

void DataRing::make_shared() {
  pid_t owner = owner_.load(std::memory_order_acquire);
  if (owner != 0) owner_.compare_exchange_strong(owner, 0, std::memory_order_acq_rel);
  settle_shared();
}

void DataRing::settle_shared_slow() {
  // Every caller runs the barrier and waits itself: one that saw owner_ = 0 set by another thread
  // must not write before the owner's write in progress is over.
  support::process_barrier();
  while (std::atomic_ref<std::uint32_t>(nest_).load(std::memory_order_acquire) != 0) {
    sched_yield();
  }
  settled_.store(true, std::memory_order_release);
}

void DataRing::add_lost(std::uint64_t n) {
  if (enter_local()) {
    local_add(lost_, n);
    leave_local();
    return;
  }
  settle_shared();
  std::atomic_ref<std::uint64_t>(lost_).fetch_add(n, std::memory_order_relaxed);
}

// ---- begin ------------------------------------------------------------------------------------

// ---- filling the record -----------------------------------------------------------------------

template <class Chunk>
void OutputHandle::for_each_chunk(std::size_t len, Chunk&& chunk) {
  std::size_t done = 0;
  while (done < len) {
    const std::uint64_t offset = (start_ + cursor_) & mask_;
    const std::size_t room = static_cast<std::size_t>(mask_ + 1 - offset);
    const std::size_t piece = len - done < room ? len - done : room;
    chunk(data_ + offset, done, piece);
    done += piece;
    cursor_ += piece;
  }
}

void OutputHandle::copy_wrapped(const void* src, std::size_t len) {
  const auto* bytes = static_cast<const std::uint8_t*>(src);
  for_each_chunk(len, [bytes](std::uint8_t* dst, std::size_t done, std::size_t piece) {
    std::memcpy(dst, bytes + done, piece);
  });
}

void OutputHandle::copy_from_ring_wrapped(const std::uint8_t* src, std::uint64_t src_mask,
                                          std::uint64_t from, std::size_t len) {
  // Each piece ends where the source or the destination wraps, whichever comes first.
  while (len != 0) {
    const std::uint64_t src_offset = from & src_mask;
    const std::size_t piece =
        static_cast<std::size_t>(std::min<std::uint64_t>(len, src_mask + 1 - src_offset));
    copy(src + src_offset, piece);
    from += piece;
    len -= piece;
  }
}

void OutputHandle::zero_wrapped(std::size_t len) {
  for_each_chunk(
      len, [](std::uint8_t* dst, std::size_t, std::size_t piece) { std::memset(dst, 0, piece); });
}

void OutputHandle::skip(std::size_t len) {
  cursor_ += len;
}

std::size_t OutputHandle::copy_custom_wrapped(CopyFn fn, const void* src, std::size_t len) {
  std::size_t missed = 0;
  for_each_chunk(len, [&](std::uint8_t* dst, std::size_t done, std::size_t piece) {
    missed += fn(dst, src, done, piece);
  });
  return missed;
}

void OutputHandle::count_sample(std::uint32_t wakeup_events) {
  if (wakeup_events == 0) return;
  std::uint64_t& events = ring_->events_;
  if (local_) {
    local_add(events, 1);
    if (detail::load(events) >= wakeup_events) {
      local_add(events, 0 - std::uint64_t{wakeup_events});
      ring_->wakeup_pending_.store(true, std::memory_order_relaxed);
    }
    return;
  }
  std::atomic_ref<std::uint64_t> shared(events);
  if (shared.fetch_add(1, std::memory_order_relaxed) + 1 >= wakeup_events) {
    shared.fetch_sub(wakeup_events, std::memory_order_relaxed);
    ring_->wakeup_pending_.store(true, std::memory_order_relaxed);
  }
}

// ---- end: publication -------------------------------------------------------------------------

void DataRing::leave() {
  if (writers_.fetch_sub(1, std::memory_order_seq_cst) != 1) return;  // not the last one out
  const std::uint64_t head = std::atomic_ref<std::uint64_t>(head_).load(std::memory_order_seq_cst);
  if (writers_.load(std::memory_order_seq_cst) != 0) return;  // a newer writer will publish
  publish_head(head);
  take_pending_wakeup();
}

void DataRing::publish_head(std::uint64_t head) {
  std::atomic_ref<__u64> data_head(control()->data_head);
  __u64 current = data_head.load(std::memory_order_relaxed);
  // Forward heads grow, backward heads shrink: publish only a head that is further along.
  auto further = [this](std::uint64_t a, std::uint64_t b) {
    const auto delta = static_cast<std::int64_t>(a - b);
    return config_.backward ? delta < 0 : delta > 0;
  };
  while (further(head, current) &&
         !data_head.compare_exchange_weak(current, head, std::memory_order_release,
                                          std::memory_order_relaxed)) {
  }
}

}  // namespace userperf::ring
