// OutputHandle: the write path into a DataRing (the kernel's perf_output_handle). begin() reserves
// space, copy()/skip() fill it, end() leaves the ring and, for the last writer out, publishes
// data_head and delivers a pending wakeup.
//
// SIGNAL-SAFE: no locks, no allocation, no syscalls except the wakeup write(2) (and, once in a
// single-writer ring's life, make_shared's barrier). Safe to call from a signal handler that
// interrupted another write on the same thread, and from several threads into one ring.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ring/data_ring.hpp"
#include "ring/local_ops.hpp"
#include "support/task_ids.hpp"

namespace userperf::ring {

enum class OutputStatus {
  kOk,
  kLost,        // no room or paused: dropped and counted (the caller counts its lost_samples too)
  kNoDataArea,  // control-page-only ring: dropped without accounting, as the kernel does
  kTooManyWriters,
};

// perf_copy_f: copies len bytes of the source at offset `offset` into dst; returns the number of
// bytes NOT copied (0 on success).
using CopyFn = std::size_t (*)(void* dst, const void* src, std::size_t offset, std::size_t len);

class OutputHandle {
 public:
  // Reserves `size` bytes (a multiple of 8). When records were lost since the last LOST record,
  // reserves `lost_record_size` bytes more in front; lost() then says how many, and the caller
  // writes that LOST record first.
  OutputStatus begin(DataRing& ring, std::uint32_t size, std::uint32_t lost_record_size);

  std::uint64_t lost() const { return lost_; }
  std::uint64_t position() const { return start_ + cursor_; }

  // Inline for the common case of a piece that does not reach the ring's end.
  void copy(const void* src, std::size_t len) {
    const std::uint64_t offset = (start_ + cursor_) & mask_;
    if (offset + len <= mask_ + 1) {
      std::memcpy(data_ + offset, src, len);
      cursor_ += len;
      return;
    }
    copy_wrapped(src, len);
  }
  // Copies the len bytes at position `from` of another ring (`src`, a power of two of
  // `src_mask` + 1 bytes, len <= its size): one memcpy when neither ring wraps within them, three
  // at most (each ring wraps once at most). The cursor moves before the copy, so that nothing is
  // reloaded behind its stores.
  void copy_from_ring(const std::uint8_t* src, std::uint64_t src_mask, std::uint64_t from,
                      std::size_t len) {
    const std::uint64_t offset = (start_ + cursor_) & mask_;
    const std::uint64_t src_offset = from & src_mask;
    if (offset + len <= mask_ + 1 && src_offset + len <= src_mask + 1) {
      cursor_ += len;
      std::memcpy(data_ + offset, src + src_offset, len);
      return;
    }
    copy_from_ring_wrapped(src, src_mask, from, len);
  }
  // The next len bytes as one piece of ring memory, the cursor moved past them; nullptr (cursor
  // unmoved) when they would wrap. For a writer that stores its fields in place.
  std::uint8_t* contiguous(std::size_t len) {
    const std::uint64_t offset = (start_ + cursor_) & mask_;
    if (offset + len > mask_ + 1) return nullptr;
    cursor_ += len;
    return data_ + offset;
  }
  template <class T>
  void put(const T& value) {
    copy(&value, sizeof value);
  }
  // Advances the cursor without writing (the kernel's __output_skip: old bytes stay).
  void skip(std::size_t len);
  void zero(std::size_t len) {
    if (std::uint8_t* dst = contiguous(len)) {
      if (len < 8) {  // a record's padding: stores, not a call
        for (std::size_t i = 0; i < len; ++i) dst[i] = 0;
      } else {
        std::memset(dst, 0, len);
      }
      return;
    }
    zero_wrapped(len);
  }
  // Copies len bytes through fn, in up to two contiguous pieces at the ring's end. Returns the
  // bytes fn did not copy; the cursor advances by len regardless so the record keeps its size.
  std::size_t copy_custom(CopyFn fn, const void* src, std::size_t len) {
    if (std::uint8_t* dst = contiguous(len)) return fn(dst, src, 0, len);
    return copy_custom_wrapped(fn, src, len);
  }

  // A PERF_RECORD_SAMPLE was written: counts towards attr.wakeup_events (0 = not in that mode).
  void count_sample(std::uint32_t wakeup_events);

  void end();

 private:
  template <class Chunk>
  void for_each_chunk(std::size_t len, Chunk&& chunk);
  void copy_wrapped(const void* src, std::size_t len);
  void zero_wrapped(std::size_t len);
  std::size_t copy_custom_wrapped(CopyFn fn, const void* src, std::size_t len);
  void copy_from_ring_wrapped(const std::uint8_t* src, std::uint64_t src_mask, std::uint64_t from,
                              std::size_t len);

  DataRing* ring_ = nullptr;
  std::uint8_t* data_ = nullptr;  // the ring's data area and mask, copied at begin()
  std::uint64_t mask_ = 0;
  std::uint64_t start_ = 0;   // ring position of the first reserved byte (lowest address)
  std::uint64_t cursor_ = 0;  // bytes written or skipped so far
  std::uint64_t size_ = 0;    // bytes reserved
  std::uint64_t lost_ = 0;
  bool local_ = false;  // the single-writer discipline (data_ring.hpp)
};

// ---- inline: what every record runs (the rest is in output_handle.cpp) ------------------------

namespace detail {

constexpr std::uint32_t kMaxWriters = 1u << 20;

// Free space as ring_buffer_detail::has_space() computes it: at most data_size - 1 bytes
// outstanding.
inline bool has_space(std::uint64_t head, std::uint64_t tail, std::uint64_t mask,
                      std::uint64_t size, bool backward) {
  const std::uint64_t space = backward ? (head - tail - 1) & mask : (tail - head - 1) & mask;
  return space >= size;
}

inline std::uint64_t load(const std::uint64_t& word) {
  return std::atomic_ref<const std::uint64_t>(word).load(std::memory_order_relaxed);
}

inline std::uint32_t load_nest(const std::uint32_t& nest) {
  return std::atomic_ref<const std::uint32_t>(nest).load(std::memory_order_relaxed);
}

// The owner's nest count: plain stores (a handler on the same thread leaves it as it found it),
// atomic only so that make_shared's waiter on another thread may read it.
inline void store_nest(std::uint32_t& nest, std::uint32_t value) {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  std::atomic_ref<std::uint32_t>(nest).store(value, std::memory_order_release);
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

}  // namespace detail

inline bool DataRing::enter_local() {
  const pid_t owner = owner_.load(std::memory_order_relaxed);
  if (owner == 0) return false;
  if (owner != support::current_tid()) {
    make_shared();
    return false;
  }
  detail::store_nest(nest_, detail::load_nest(nest_) + 1);
  if (owner_.load(std::memory_order_relaxed) != 0) return true;
  detail::store_nest(
      nest_, detail::load_nest(nest_) - 1);  // made shared meanwhile: its waiter waits for this
  return false;
}

inline OutputStatus OutputHandle::begin(DataRing& ring, std::uint32_t size,
                                        std::uint32_t lost_record_size) {
  ring_ = &ring;
  cursor_ = 0;
  lost_ = 0;
  local_ = ring.enter_local();
  if (!local_) ring.settle_shared();
  // What a writer that cannot write does with the lost count it claimed and its own record.
  auto drop = [&](std::uint64_t claimed, OutputStatus status) {
    if (local_) {
      local_add(ring.lost_, claimed + 1);
      ring.leave_local();
    } else {
      std::atomic_ref<std::uint64_t>(ring.lost_).fetch_add(claimed + 1, std::memory_order_relaxed);
      ring.leave();  // entered writers_ below
    }
    return status;
  };
  if (ring.paused_.load(std::memory_order_acquire)) {
    if (ring.mask_ == 0) {
      if (local_) ring.leave_local();
      return OutputStatus::kNoDataArea;
    }
    if (local_) return drop(0, OutputStatus::kLost);
    std::atomic_ref<std::uint64_t>(ring.lost_).fetch_add(1, std::memory_order_relaxed);
    return OutputStatus::kLost;
  }
  // Claim the pending lost count up front so exactly one writer reports it.
  std::uint64_t claimed = 0;
  if (detail::load(ring.lost_) != 0) {
    claimed =
        local_ ? local_take(ring.lost_)
               : std::atomic_ref<std::uint64_t>(ring.lost_).exchange(0, std::memory_order_acq_rel);
  }
  const std::uint64_t total = size + (claimed != 0 ? lost_record_size : 0);

  if (!local_ && ring.writers_.fetch_add(1, std::memory_order_seq_cst) >= detail::kMaxWriters) {
    return drop(claimed, OutputStatus::kTooManyWriters);
  }
  const bool backward = ring.config_.backward;
  const bool overwrite = ring.config_.overwrite;
  perf_event_mmap_page* page = ring.control();
  std::atomic_ref<std::uint64_t> shared_head(ring.head_);
  std::uint64_t head = detail::load(ring.head_);
  std::uint64_t next;
  for (;;) {
    if (!overwrite) {
      // The tail is the consumer's word: any value is harmless, it only sizes the free space.
      const std::uint64_t tail =
          std::atomic_ref<__u64>(page->data_tail).load(std::memory_order_acquire);
      if (total > ring.mask_ || !detail::has_space(head, tail, ring.mask_, total, backward)) {
        return drop(claimed, OutputStatus::kLost);
      }
    } else if (total > ring.mask_ + 1) {
      return drop(claimed, OutputStatus::kLost);
    }
    next = backward ? head - total : head + total;
    if (local_) {
      if (local_cmpxchg(ring.head_, head, next)) break;
      head = detail::load(ring.head_);  // a handler on this thread reserved in between
    } else if (shared_head.compare_exchange_weak(head, next, std::memory_order_seq_cst,
                                                 std::memory_order_relaxed)) {
      break;
    }
  }

  // Position wakeup: a stamp each time the written distance passes another watermark.
  const std::uint64_t distance = backward ? 0 - next : next;
  std::uint64_t stamp = detail::load(ring.wakeup_);
  if (passed_watermark(distance, stamp, ring.watermark_)) {
    const std::uint64_t moved = stamp + ring.watermark_;
    const bool stamped =
        local_ ? local_cmpxchg(ring.wakeup_, stamp, moved)
               : std::atomic_ref<std::uint64_t>(ring.wakeup_)
                     .compare_exchange_strong(stamp, moved, std::memory_order_relaxed);
    if (stamped) ring.wakeup_pending_.store(true, std::memory_order_relaxed);
  }

  start_ = backward ? next : head;
  data_ = ring.data_;
  mask_ = ring.mask_;
  size_ = total;
  lost_ = claimed;
  return OutputStatus::kOk;
}

inline void OutputHandle::end() {
  if (local_) {
    ring_->leave_local();
  } else {
    ring_->leave();
  }
  // The TSC clock was re-anchored since the control page's conversion was written: republish it
  // (one load and a compare otherwise).
  ring_->refresh_user_time();
  ring_ = nullptr;
}

inline void DataRing::leave_local() {
  const std::uint32_t nest = detail::load_nest(nest_);
  if (nest > 1) {  // a handler inside the owner's write: the outer writer publishes
    detail::store_nest(nest_, nest - 1);
    return;
  }
  std::atomic_ref<__u64> data_head(control()->data_head);
  for (;;) {
    const std::uint64_t head = detail::load(head_);
    data_head.store(head, std::memory_order_release);  // the records' bytes before the head
    // Publish before dropping the nest count: a handler arriving after the drop publishes a newer
    // head itself, and ours must not overwrite it with an older one.
    detail::store_nest(nest_, 0);
    if (head == detail::load(head_)) break;
    // A handler reserved between the load and the drop and did not publish (it was nested).
    detail::store_nest(nest_, 1);
    if (owner_.load(std::memory_order_relaxed) == 0) {
      // Made shared meanwhile: the shared writers publish from here on (and wait for this).
      detail::store_nest(nest_, 0);
      break;
    }
  }
  take_pending_wakeup();
}

inline void DataRing::take_pending_wakeup() {
  if (wakeup_pending_.load(std::memory_order_relaxed) &&
      wakeup_pending_.exchange(false, std::memory_order_acq_rel)) {
    wake();
  }
}

}  // namespace userperf::ring
