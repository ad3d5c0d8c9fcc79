// SIGNAL-SAFE except AuxStream::start/stop: see aux_output.hpp.
#include "core/aux_output.hpp"

#include <sched.h>
#include <unistd.h>

#include <cerrno>

#include "core/sample_output.hpp"
#include "support/task_ids.hpp"

namespace userperf::core {

namespace {

constexpr std::uint64_t kFlagsUserMayNotSet = PERF_AUX_FLAG_OVERWRITE;

// The sample_id of records the AUX path writes: the event's task (a per-thread event) or the
// writing thread.
SampleId aux_record_id(const Event& event) {
  const pid_t tid = event.pid != -1 ? event.pid : support::current_tid();
  return SampleId{static_cast<std::uint32_t>(support::current_pid()),
                  static_cast<std::uint32_t>(tid), event.clock_now(),
                  static_cast<std::uint32_t>(sched_getcpu())};
}

// perf_event_disable_inatomic: the write path cannot take the engine lock, so the event just
// stops being active (as an exhausted REFRESH count does); ioctl(ENABLE) brings it back.
void disable_from_write_path(Event& event) {
  event.state.store(EventState::kOff, std::memory_order_release);
}

}  // namespace

bool AuxOutput::begin(Event& event) {
  ring::DataRing* rb = event.rb.load(std::memory_order_acquire);
  if (rb == nullptr) return false;
  ring::AuxRing* aux = rb->aux();
  if (aux == nullptr || !aux->try_nest()) return false;
  event_ = &event;
  head_ = aux->head();
  size_ = 0;
  flags_ = 0;
  written_ = 0;
  if (!aux->overwrite()) {
    const std::uint64_t tail = aux->load_tail();
    // CIRC_SPACE: one byte stays free so that head == tail means empty.
    if (head_ - tail < aux->size()) size_ = (tail - head_ - 1) & (aux->size() - 1);
    if (size_ == 0) {
      disable_from_write_path(event);
      rb->wake_now();
      aux->unnest();
      event_ = nullptr;
      return false;
    }
  }
  aux->set_write_position(head_);
  aux_ = aux;
  return true;
}

void AuxOutput::set_head(std::uint64_t head) {
  if (aux_ == nullptr || !aux_->overwrite()) return;
  head_ = head;
  aux_->set_write_position(head);
  aux_->publish_head(head);
}

void AuxOutput::flag(std::uint64_t flags) {
  flags_ |= flags & ~kFlagsUserMayNotSet;
}

int AuxOutput::skip(std::uint64_t n) {
  if (aux_ == nullptr) return -EINVAL;
  if (n > size_) return -ENOSPC;
  // Alignment gaps come before a handle's data (as drivers use it): aux_head moves past them
  // without a record.
  if (written_ != 0) return -EINVAL;
  const std::uint64_t head = aux_->head() + n;
  aux_->set_head(head);
  aux_->publish_head(head);
  if (aux_->need_wakeup()) {
    if (ring::DataRing* rb = event_->rb.load(std::memory_order_acquire)) rb->wake_now();
  }
  head_ = head;
  size_ -= n;
  aux_->set_write_position(head);
  return 0;
}

bool AuxOutput::write(const void* src, std::size_t len) {
  return write2(src, len, nullptr, 0);
}

void AuxOutput::end(std::uint64_t size) {
  if (aux_ == nullptr) return;
  ring::AuxRing& aux = *aux_;
  bool wakeup = (flags_ & PERF_AUX_FLAG_TRUNCATED) != 0;
  std::uint64_t offset;
  if (aux.overwrite()) {
    flags_ |= PERF_AUX_FLAG_OVERWRITE;
    offset = head_;
    aux.set_head(head_);
  } else {
    flags_ &= ~std::uint64_t{PERF_AUX_FLAG_OVERWRITE};
    offset = aux.head();
    aux.set_head(offset + size);
  }
  // Since 4.20 a record that says only OVERWRITE is not written.
  if (size != 0 || (flags_ & ~std::uint64_t{PERF_AUX_FLAG_OVERWRITE}) != 0) {
    const struct { std::uint64_t offset, size, flags; } body{offset, size, flags_};
    output_sideband(*event_, PERF_RECORD_AUX, 0, &body, sizeof body, aux_record_id(*event_));
  }
  const std::uint64_t head = aux.head();
  aux.publish_head(head);
  aux.set_write_position(head);
  if (aux.need_wakeup()) wakeup = true;
  if (wakeup) {
    if (flags_ & PERF_AUX_FLAG_TRUNCATED) disable_from_write_path(*event_);
    if (ring::DataRing* rb = event_->rb.load(std::memory_order_acquire)) rb->wake_now();
  }
  aux.unnest();
  aux_ = nullptr;
  event_ = nullptr;
}

// ---- AuxStream ---------------------------------------------------------------------------------

namespace {

// The byte lock of the event's AUX area for the duration of a scope (or why it was not taken).
class ByteLock {
 public:
  explicit ByteLock(ring::AuxRing* aux)
      : aux_(aux), state_(aux != nullptr ? aux->lock_bytes() : ring::AuxRing::Lock::kBusy) {}
  ~ByteLock() {
    if (state_ == ring::AuxRing::Lock::kTaken) aux_->unlock_bytes();
  }
  ByteLock(const ByteLock&) = delete;
  ByteLock& operator=(const ByteLock&) = delete;
  ring::AuxRing::Lock state() const { return state_; }

 private:
  ring::AuxRing* aux_;
  ring::AuxRing::Lock state_;
};

}  // namespace

bool AuxStream::ensure_handle() {
  if (handle_.active()) return true;
  if (!handle_.begin(event_)) return false;
  writer_.contended.store(false, std::memory_order_relaxed);  // a new handle may be owned again
  ring::AuxRing* aux = handle_.aux();
  area_.store(aux, std::memory_order_relaxed);
  // Engine::free_aux unpublishes the area (DataRing::set_aux) and then release_area looks for a
  // handle on it: either it finds this one, or this sees the area unpublished and lets go (else
  // the handle would outlive the area, and the owner's appends would store into freed memory).
  // Both sides pass through one read-modify-write of `handoff_`, so one of them sees the other.
  // stop() clears running_ before its release_area, so the same read-modify-write orders this
  // against it too: a writer that saw running_ before a stop and took the byte lock after it must
  // not open a handle the stop has already looked for (its store would land after the disable).
  handoff_.fetch_add(1, std::memory_order_acq_rel);
  if (event_.aux_area() != aux || !running_.load(std::memory_order_acquire)) {
    end_handle();
    return false;
  }
  if (pending_partial_.exchange(false, std::memory_order_relaxed)) {
    handle_.flag(PERF_AUX_FLAG_PARTIAL);
  }
  return true;
}

void AuxStream::end_handle() {
  if (!handle_.active()) return;
  handle_.end(handle_.written());
  area_.store(nullptr, std::memory_order_release);
}

void AuxStream::start() {
  OutputGuard guard(grace_);
  running_.store(true, std::memory_order_release);
  ring::AuxRing* aux = event_.aux_area();
  if (aux == nullptr) return;  // not mapped yet: the first append begins the handle
  // A writer that appended since running_ was set has opened a handle and owns it: taking the byte
  // lock now would only revoke its bias for the whole of that handle.
  if (writer_.owner.load(std::memory_order_acquire) != 0) return;
  for (;;) {
    ByteLock lock(aux);
    if (lock.state() == ring::AuxRing::Lock::kBusy) {
      sched_yield();  // engine context: a writer on another thread is stopped inside its store
      continue;
    }
    ensure_handle();
    return;
  }
}

void AuxStream::stop() {
  running_.store(false, std::memory_order_release);
  release_area();
}

void AuxStream::release_area() {
  OutputGuard guard(grace_);
  handoff_.fetch_add(1, std::memory_order_acq_rel);  // see ensure_handle
  for (;;) {
    // The area of the open handle, if any: alive until this returns (its free waits for it).
    ring::AuxRing* aux = area_.load(std::memory_order_acquire);
    if (aux == nullptr) return;
    ByteLock lock(aux);
    if (lock.state() == ring::AuxRing::Lock::kBusy) {
      sched_yield();  // engine context: a writer on another thread is stopped inside its store
      continue;
    }
    if (area_.load(std::memory_order_relaxed) != aux) continue;  // ended meanwhile
    end_handle();
    return;
  }
}

void AuxStream::flush() {
  OutputGuard guard(grace_);
  ring::AuxRing* aux = event_.aux_area();
  if (aux == nullptr) return;
  ByteLock lock(aux);
  if (lock.state() != ring::AuxRing::Lock::kTaken) return;
  end_handle();
  if (running_.load(std::memory_order_acquire) &&
      event_.state.load(std::memory_order_acquire) == EventState::kActive) {
    ensure_handle();
  }
}

AuxStream::Append AuxStream::drop(Append why, bool may_flag_handle) {
  // A dropped entry leaves a gap: the record of the open handle says PARTIAL, or, when this
  // thread cannot touch the handle (byte lock not taken) or none is open, the next one does.
  dropped_.fetch_add(1, std::memory_order_relaxed);
  if (may_flag_handle && handle_.active()) {
    handle_.flag(PERF_AUX_FLAG_PARTIAL);
  } else {
    pending_partial_.store(true, std::memory_order_relaxed);
  }
  return why;
}

void AuxStream::claim(ring::AuxRing* aux, std::uintptr_t self) {
  if (!ring::aux_bias_enabled() || writer_.contended.load(std::memory_order_relaxed) ||
      !handle_.active() || handle_.aux() != aux) {
    return;
  }
  aux->set_writer(&writer_);
  writer_.owner.store(self, std::memory_order_relaxed);
}

AuxStream::Append AuxStream::append_locked(const void* a, std::size_t alen, const void* b,
                                           std::size_t blen, std::uintptr_t self) {
  OutputGuard guard(grace_);
  if (!running_.load(std::memory_order_acquire) ||
      event_.state.load(std::memory_order_acquire) != EventState::kActive) {
    return Append::kStopped;
  }
  ring::AuxRing* aux = event_.aux_area();
  if (aux == nullptr) return Append::kStopped;
  ByteLock lock(aux);
  if (lock.state() == ring::AuxRing::Lock::kNested) return drop(Append::kNested, false);
  if (lock.state() == ring::AuxRing::Lock::kBusy) return drop(Append::kBusy, false);
  const std::uint64_t len = alen + blen;
  if (len > aux->size() - 1) return drop(Append::kTooBig, true);
  if (!ensure_handle()) {
    if (!running_.load(std::memory_order_acquire)) return Append::kStopped;  // stopped meanwhile
    return event_.state.load(std::memory_order_acquire) == EventState::kActive
               ? drop(Append::kBusy, true)  // another handle is active on the area
               : drop(Append::kFull, true);
  }
  if (!aux->overwrite() && len > handle_.size()) {
    // Publish what this handle holds and look at aux_tail again: the consumer may have made room.
    end_handle();
    if (!ensure_handle()) {
      return running_.load(std::memory_order_acquire) ? drop(Append::kFull, true)
                                                      : Append::kStopped;
    }
    if (len > handle_.size()) {
      handle_.flag(PERF_AUX_FLAG_TRUNCATED);
      end_handle();  // the record says TRUNCATED; the event is now disabled
      return drop(Append::kFull, true);
    }
  }
  handle_.write2(a, alen, b, blen);
  if (aux->past_watermark(handle_.head())) {
    // A watermark passed: end the handle (record + wakeup) and go on in a new one.
    end_handle();
    ensure_handle();
  }
  claim(aux, self);
  return Append::kOk;
}

}  // namespace userperf::core
