// The AUX write path, as PMU drivers see it (kernel-perf-spec §4.3):
//
// AuxOutput is the kernel's perf_output_handle for the AUX area: perf_aux_output_begin / _flag /
// _skip / _end. end() publishes aux_head, writes PERF_RECORD_AUX{offset, size, flags} into the data
// ring (not for OVERWRITE alone, as since 4.20), delivers the aux_watermark wakeup, and, when the
// handle was TRUNCATED, disables the event. A normal-mode begin() on a full area disables the event
// and wakes the consumer, which drains, moves aux_tail and re-enables.
//
// AuxStream is what userperf's software sources use on top of it: one long-lived handle per event,
// begun when the event is scheduled in and ended when it is scheduled out, re-begun at each
// watermark (so consumers see PERF_RECORD_AUX and wakeups as the trace grows) and when a
// normal-mode area fills (re-reading aux_tail first; if the consumer has not made room, the handle
// ends TRUNCATED and the event is disabled). Entries are never split across handles. Entries that
// could not be stored are counted, and the record covering the gap carries PERF_AUX_FLAG_PARTIAL.
//
// An AuxStream appended to by one thread owns its area's byte lock (ring::AuxWriter, biased
// locking): once its handle is open and the thread has appended under the lock, the thread's
// appends are plain stores — no byte lock, no grace period (the open handle keeps the area and the
// data ring alive: whoever ends it from another thread takes the byte lock, which first waits for
// the owner to leave its store). Appends that end or begin a handle (a watermark, a full area, the
// first one) take the grace period and the byte lock, as do appends from any other thread; a
// sample on another thread revokes the bias for the rest of the handle.
//
// SIGNAL-SAFE: begin/end/skip/flag/write and AuxStream::append/flush. AuxStream::start/stop run
// under the engine lock (the PMU's add/del).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/event.hpp"
#include "core/output_guard.hpp"
#include "ring/aux_ring.hpp"

namespace userperf::core {

class AuxOutput {
 public:
  // perf_aux_output_begin. False when the event's buffer has no AUX area, another handle is active
  // on it (AUX writers do not nest), or, normal mode, it has no free byte (the event is disabled
  // and the consumer woken).
  bool begin(Event& event);
  bool active() const { return aux_ != nullptr; }
  ring::AuxRing* aux() const { return aux_; }

  // Where the next byte goes (free-running AUX position).
  std::uint64_t head() const { return head_; }
  // Normal mode: bytes this handle may still write. Overwrite mode: 0 (unbounded, as the kernel).
  std::uint64_t size() const { return size_; }
  // Overwrite mode: a driver that stores bytes itself reports its position (handle->head).
  void set_head(std::uint64_t head);
  // perf_aux_output_flag: TRUNCATED, PARTIAL, COLLISION and PMU format bits; OVERWRITE is refused
  // (ignored), as the kernel's.
  void flag(std::uint64_t flags);
  std::uint64_t flags() const { return flags_; }
  // perf_aux_output_skip: advances aux_head by n without a record; -ENOSPC when n > size().
  int skip(std::uint64_t n);
  // Stores len bytes at head() and advances it; normal mode: false (nothing stored) when
  // len > size(). The caller holds the area's byte lock (ring::AuxRing::lock_bytes) when a sampler
  // on another thread may copy from the area.
  bool write(const void* src, std::size_t len);
  // Two pieces as one store (an entry's header and payload), without a staging copy.
  bool write2(const void* a, std::size_t alen, const void* b, std::size_t blen);
  // Bytes written or skipped since begin() (what a software source passes to end()).
  std::uint64_t written() const { return written_; }
  // perf_aux_output_end with `size` new bytes (normal mode; ignored in overwrite mode, where the
  // record's size is this too and its offset the handle's head).
  void end(std::uint64_t size);

 private:
  Event* event_ = nullptr;
  ring::AuxRing* aux_ = nullptr;
  std::uint64_t head_ = 0;
  std::uint64_t size_ = 0;
  std::uint64_t flags_ = 0;
  std::uint64_t written_ = 0;
};

inline bool AuxOutput::write2(const void* a, std::size_t alen, const void* b, std::size_t blen) {
  if (aux_ == nullptr) return false;
  const std::uint64_t len = alen + blen;
  if (aux_->overwrite() ? len > aux_->size() : len > size_) return false;
  aux_->set_store_end(head_ + len);
  aux_->store(head_, a, alen);
  if (blen != 0) aux_->store(head_ + alen, b, blen);
  head_ += len;
  written_ += len;
  if (!aux_->overwrite()) size_ -= len;
  aux_->set_write_position(head_);
  // Overwrite mode: aux_head follows every store, not only end(), so that a consumer holding the
  // mapping finds the newest data even if this process dies without ending the handle.
  if (aux_->overwrite()) aux_->publish_head(head_);
  return true;
}

class AuxStream {
 public:
  enum class Append {
    kOk,
    kStopped,  // the event is not active, or its AUX area is not mapped
    kNested,   // a signal handler interrupted this thread's own append
    kBusy,     // another thread held the AUX area too long
    kFull,     // normal mode: no room; the handle ended TRUNCATED and the event is disabled
    kTooBig,   // the entry is larger than the whole area
  };

  AuxStream(Event& event, GracePeriod& grace) : event_(event), grace_(grace) {}
  AuxStream(const AuxStream&) = delete;
  AuxStream& operator=(const AuxStream&) = delete;

  // The PMU's add(): begins a handle if the AUX area is mapped (else the first append does).
  void start();
  // The PMU's del(): ends the handle with what it holds.
  void stop();
  // The PMU's free_aux(): the area goes away; ends the handle on it. A running stream begins on a
  // new area at its next append.
  void release_area();
  // Appends one entry of up to two pieces. SIGNAL-SAFE; one writer at a time per stream is not
  // required (appends from several threads serialise on the byte lock; the stream is then not
  // biased to any of them after the first contention, until its next handle).
  Append append(const void* a, std::size_t alen, const void* b = nullptr, std::size_t blen = 0);
  // Ends the handle and begins another: aux_head and a PERF_RECORD_AUX for what was written now.
  void flush();
  // Entries dropped since the stream was created.
  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // The byte lock's biased owner record (for tests: who owns it, whether it was contended).
  const ring::AuxWriter& writer() const { return writer_; }

 private:
  // The owner's append, inside its `busy` section: false when it needs the locked path (no open
  // handle, a handle to end or begin, a stopped stream); nothing was stored then.
  bool append_owned(const void* a, std::size_t alen, const void* b, std::size_t blen);
  Append append_locked(const void* a, std::size_t alen, const void* b, std::size_t blen,
                       std::uintptr_t self);
  Append drop(Append why, bool may_flag_handle);
  bool ensure_handle();  // byte lock held
  void end_handle();     // byte lock held
  // Byte lock held, after a successful append: the calling thread becomes the area's biased owner
  // unless the bias was revoked by another thread during this handle.
  void claim(ring::AuxRing* aux, std::uintptr_t self);

  Event& event_;
  GracePeriod& grace_;
  ring::AuxWriter writer_;
  AuxOutput handle_;                           // byte lock held, or the owner inside `busy`
  std::atomic<ring::AuxRing*> area_{nullptr};  // the open handle's area, for release_area
  std::atomic<std::uint32_t> handoff_{0};      // orders ensure_handle against release_area
  std::atomic<bool> running_{false};
  std::atomic<bool> pending_partial_{false};
  std::atomic<std::uint64_t> dropped_{0};
};

}  // namespace userperf::core
