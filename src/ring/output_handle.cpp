// The signal-safe write path. See output_handle.hpp for the contract and data_ring.hpp for state.
//
// Publication rule: a writer enters by incrementing writers_ *before* it reserves, and leaves by
// decrementing it after its last store. The writer that takes writers_ to 0 reads head_, checks
// that writers_ is still 0, and only then publishes that head: every record below that head was
// reserved by a writer that entered before the read, so had it not finished, writers_ would not be
// 0. This is the kernel's nest counter and re-check loop (perf_output_put_handle) made
// multi-producer. data_head is advanced with a compare-and-swap that never moves it backwards,
// because two writers leaving on different threads may publish in either order.
#include "ring/output_handle.hpp"
#include "support/descriptors.hpp"

#include <unistd.h>

#include <atomic>
#include <cstring>

namespace userperf::ring {

namespace {

constexpr std::uint32_t kMaxWriters = 1u << 20;

// Free space as ring_buffer_has_space() computes it: at most data_size - 1 bytes outstanding.
bool has_space(std::uint64_t head, std::uint64_t tail, std::uint64_t mask, std::uint64_t size,
               bool backward) {
  const std::uint64_t space = backward ? (head - tail - 1) & mask : (tail - head - 1) & mask;
  return space >= size;
}

}  // namespace

OutputStatus OutputHandle::begin(DataRing& ring, std::uint32_t size,
                                 std::uint32_t lost_record_size) {
  ring_ = &ring;
  cursor_ = 0;
  lost_ = 0;
  if (ring.paused_.load(std::memory_order_acquire)) {
    if (ring.mask_ == 0) return OutputStatus::kNoDataArea;
    ring.lost_.fetch_add(1, std::memory_order_relaxed);
    return OutputStatus::kLost;
  }
  // Claim the pending lost count up front so exactly one writer reports it.
  std::uint64_t claimed = ring.lost_.load(std::memory_order_relaxed) != 0
                              ? ring.lost_.exchange(0, std::memory_order_acq_rel)
                              : 0;
  const std::uint64_t total = size + (claimed != 0 ? lost_record_size : 0);

  if (ring.writers_.fetch_add(1, std::memory_order_seq_cst) >= kMaxWriters) {
    ring.lost_.fetch_add(claimed + 1, std::memory_order_relaxed);
    ring.leave();
    return OutputStatus::kTooManyWriters;
  }
  const bool backward = ring.config_.backward;
  const bool overwrite = ring.config_.overwrite;
  perf_event_mmap_page* page = ring.control();
  std::uint64_t head = ring.head_.load(std::memory_order_relaxed);
  std::uint64_t next;
  do {
    if (!overwrite) {
      // The tail is the consumer's word: any value is harmless, it only sizes the free space.
      const std::uint64_t tail =
          std::atomic_ref<__u64>(page->data_tail).load(std::memory_order_acquire);
      if (total > ring.mask_ || !has_space(head, tail, ring.mask_, total, backward)) {
        ring.lost_.fetch_add(claimed + 1, std::memory_order_relaxed);
        ring.leave();
        return OutputStatus::kLost;
      }
    } else if (total > ring.mask_ + 1) {
      ring.lost_.fetch_add(claimed + 1, std::memory_order_relaxed);
      ring.leave();
      return OutputStatus::kLost;
    }
    next = backward ? head - total : head + total;
  } while (!ring.head_.compare_exchange_weak(head, next, std::memory_order_seq_cst,
                                             std::memory_order_relaxed));

  // Position wakeup: a stamp each time the written distance passes another watermark.
  const std::uint64_t distance = backward ? 0 - next : next;
  std::uint64_t stamp = ring.wakeup_.load(std::memory_order_relaxed);
  if (passed_watermark(distance, stamp, ring.watermark_) &&
      ring.wakeup_.compare_exchange_strong(stamp, stamp + ring.watermark_,
                                           std::memory_order_relaxed)) {
    ring.wakeup_pending_.store(true, std::memory_order_relaxed);
  }

  start_ = backward ? next : head;
  data_ = ring.data_;
  mask_ = ring.mask_;
  size_ = total;
  lost_ = claimed;
  return OutputStatus::kOk;
}

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

void OutputHandle::zero(std::size_t len) {
  for_each_chunk(
      len, [](std::uint8_t* dst, std::size_t, std::size_t piece) { std::memset(dst, 0, piece); });
}

void OutputHandle::skip(std::size_t len) {
  cursor_ += len;
}

std::size_t OutputHandle::copy_custom(CopyFn fn, const void* src, std::size_t len) {
  std::size_t missed = 0;
  for_each_chunk(len, [&](std::uint8_t* dst, std::size_t done, std::size_t piece) {
    missed += fn(dst, src, done, piece);
  });
  return missed;
}

void OutputHandle::count_sample(std::uint32_t wakeup_events) {
  if (wakeup_events == 0) return;
  const std::uint32_t events = ring_->events_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (events >= wakeup_events) {
    ring_->events_.fetch_sub(wakeup_events, std::memory_order_relaxed);
    ring_->wakeup_pending_.store(true, std::memory_order_relaxed);
  }
}

void OutputHandle::end() {
  ring_->leave();
  ring_ = nullptr;
}

void DataRing::leave() {
  if (writers_.fetch_sub(1, std::memory_order_seq_cst) != 1) return;  // not the last one out
  const std::uint64_t head = head_.load(std::memory_order_seq_cst);
  if (writers_.load(std::memory_order_seq_cst) != 0) return;  // a newer writer will publish
  publish_head(head);
  if (wakeup_pending_.load(std::memory_order_relaxed) &&
      wakeup_pending_.exchange(false, std::memory_order_acq_rel)) {
    wake();
  }
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

void DataRing::wake() {
  const int fd = wake_write_.load(std::memory_order_acquire);
  if (fd < 0) return;
  // A program may have closed the pipe with a raw system call and opened its own file at that
  // number: never write into it (support/descriptors.hpp). Only registered descriptors are checked.
  if (support::owns_descriptor(fd) && !support::still_ours(fd)) {
    wake_write_.store(-1, std::memory_order_release);
    return;
  }
  const char byte = 1;
  // A full pipe already holds a pending wakeup; nothing is lost by ignoring EAGAIN.
  [[maybe_unused]] const ssize_t n = write(fd, &byte, 1);
}

}  // namespace userperf::ring
