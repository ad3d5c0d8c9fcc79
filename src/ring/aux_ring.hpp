// AuxRing: the AUX area of a buffer (the kernel's rb->aux_* state, kernel-perf-spec §4): 2^n
// zero-filled pages in their own memfd, which consumers map at the control page's aux_offset. The
// positions it publishes (aux_head) and reads (aux_tail) live in the data ring's control page.
//
// Two locks of the kernel become two words here:
// - `nest`: one AUX handle at a time (rb->aux_nest). Taken by AuxOutput::begin, given back by end.
// - the byte lock: the thread that stores trace bytes or copies them out for a sample. The kernel
//   needs none (a hardware tracer is stopped while its driver snapshots it); software sources store
//   the bytes themselves, possibly on another thread than the sampler, so the bytes a sample copies
//   must not be written meanwhile. Held for one store or one copy, never across a handle.
//
// The byte lock is biased (AuxWriter): the thread that keeps appending to an area owns it and
// stores and samples with plain stores, as the kernel's writer and perf_aux_sample_output share one
// CPU; any other thread that takes the byte lock first revokes the bias (a heavy barrier, then it
// waits for the owner to leave its store). See docs/aux.md, "The byte lock and its owner".
//
// SIGNAL-SAFE: every member but create() and the destructor.
#pragma once

#include <linux/perf_event.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "ring/output_handle.hpp"
#include "ring/ring_memory.hpp"

namespace userperf::ring {

// This thread's identity for the byte lock and AuxWriter: the address of a thread-local word
// (8-aligned, so the low bits of a token are free). SIGNAL-SAFE.
extern __attribute__((
    tls_model("initial-exec"))) constinit thread_local std::uint64_t t_aux_thread_word;
inline std::uintptr_t aux_thread_token() {
  return reinterpret_cast<std::uintptr_t>(&t_aux_thread_word);
}

// Whether an AuxWriter may be biased: the heavy barrier that revokes it is the process barrier
// (support/process_barrier.hpp). Without it no writer is ever biased and every store takes the
// byte lock.
bool aux_bias_enabled();

// The biased owner of an area's byte lock: the AUX stream whose handle is open on the area, owned
// by the thread that appends to it. The owner enters its store (or a sample's copy) with plain
// stores: `busy` = its token | what it does, then it checks `owner` again. A thread that takes the
// byte lock while a writer is registered on the area revokes the bias: `owner` = 0, a heavy
// barrier (after which the owner either saw 0 or its `busy` is visible), then it waits for `busy`
// to be 0. Owned by the stream (it outlives every registration on an area); registered on an area
// only while the byte lock is held (AuxRing::set_writer), unregistered by the next lock holder.
struct AuxWriter {
  static constexpr std::uintptr_t kAppending = 1;
  static constexpr std::uintptr_t kSampling = 2;
  static constexpr std::uintptr_t kWhatMask = 7;
  static std::uintptr_t holder(std::uintptr_t busy) { return busy & ~kWhatMask; }

  std::atomic<std::uintptr_t> owner{0};  // the owner's token; 0: every store takes the lock
  std::atomic<std::uintptr_t> busy{0};   // token | kAppending or kSampling while the owner is in
  std::atomic<bool> contended{false};    // another thread revoked the bias during this handle
};

class AuxRing {
 public:
  // pages: a power of two (> 0). overwrite: mapped read-only (aux_tail ignored, the oldest data is
  // overwritten). watermark: attr.aux_watermark; normal mode 0 selects half the area (capped at
  // 4 GiB), overwrite mode has none (rb_alloc_aux). `control` is the data ring's control page.
  static int create(std::size_t pages, bool overwrite, std::uint64_t watermark,
                    perf_event_mmap_page* control, std::unique_ptr<AuxRing>& out);
  ~AuxRing();
  AuxRing(const AuxRing&) = delete;
  AuxRing& operator=(const AuxRing&) = delete;

  std::uint8_t* data() const { return data_; }
  std::uint64_t size() const { return size_; }
  std::size_t pages() const { return size_ / page_size(); }
  int memfd() const { return fd_; }
  bool overwrite() const { return overwrite_; }
  std::uint64_t watermark() const { return watermark_; }
  perf_event_mmap_page* control() const { return control_; }

  // ---- handle state (rb->aux_head, aux_wakeup, aux_nest); used by core::AuxOutput ----
  bool try_nest() { return !nest_.exchange(true, std::memory_order_acquire); }
  void unnest() { nest_.store(false, std::memory_order_release); }
  std::uint64_t head() const { return head_.load(std::memory_order_relaxed); }
  void set_head(std::uint64_t head) { head_.store(head, std::memory_order_relaxed); }
  // Publishes aux_head in the control page (release: the trace bytes below it are written).
  void publish_head(std::uint64_t head) {
    std::atomic_ref<__u64>(control_->aux_head).store(head, std::memory_order_release);
  }
  // The consumer's aux_tail (normal mode): any value is harmless, it only sizes the free space.
  std::uint64_t load_tail() const;
  // Normal mode: whether position `pos` lies a watermark or more past the last wakeup stamp.
  bool past_watermark(std::uint64_t pos) const {
    return !overwrite_ && pos - wakeup_ >= watermark_;
  }
  // rb_need_aux_wakeup: past_watermark(aux_head); if so, the stamp moves to aux_head rounded down
  // to the watermark. Handle holder only.
  bool need_wakeup() {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (!past_watermark(head)) return false;
    wakeup_ = head - head % watermark_;
    return true;
  }

  // ---- the driver's write position: bytes below it are complete ----
  // Normal mode: aux_head plus what the open handle wrote; overwrite mode: the handle's head.
  std::uint64_t write_position() const { return write_pos_.load(std::memory_order_acquire); }
  void set_write_position(std::uint64_t pos) { write_pos_.store(pos, std::memory_order_release); }
  // Bytes ever written (saturates at size() for "how much history the area holds").
  std::uint64_t history() const {
    const std::uint64_t pos = write_position();
    return pos < size_ ? pos : size_;
  }

  // ---- the byte lock ----
  enum class Lock { kTaken, kNested, kBusy };
  // kTaken: this thread now holds it, and no biased writer is registered any more (one that was
  // was revoked and has left its store). kNested: this thread already holds it (a signal handler
  // interrupted its own store or copy): not taken. kBusy: another thread held it, or the revoked
  // owner stayed inside its store, past the spin budget (stopped or descheduled for long): not
  // taken.
  Lock lock_bytes();
  void unlock_bytes();
  // The biased writer registered on the area, nullptr when none. Byte lock holder: registers one
  // (whose handle is open on this area; its `owner` is set by the caller after this).
  AuxWriter* writer() const { return writer_.load(std::memory_order_acquire); }
  void set_writer(AuxWriter* writer) { writer_.store(writer, std::memory_order_release); }
  // Set by the holder before a store: the end of the bytes being written (write_position() + len),
  // so that a copy nested in that store on the same thread stays clear of them.
  void set_store_end(std::uint64_t end) { store_end_.store(end, std::memory_order_relaxed); }
  std::uint64_t store_end() const { return store_end_.load(std::memory_order_relaxed); }

  // Stores len bytes at ring position pos (wrapping). Caller holds the byte lock or owns it.
  void store(std::uint64_t pos, const void* src, std::size_t len) {
    const std::uint64_t offset = pos & mask_;
    if (len <= size_ - offset) {
      copy_in(data_ + offset, static_cast<const std::uint8_t*>(src), len);
    } else {
      store_wrapping(pos, src, len);
    }
  }
  // perf_output_copy_aux: copies the len bytes that end at position `end` (wrapping) into h.
  // len <= size(). Caller holds the byte lock or runs nested in its holder.
  void copy_out(OutputHandle& h, std::uint64_t end, std::uint64_t len) const {
    h.copy_from_ring(data_, mask_, end - len, len);
  }

 private:
  AuxRing() = default;

  int fd_ = -1;
  std::uint8_t* data_ = nullptr;
  std::uint64_t size_ = 0;
  std::uint64_t mask_ = 0;
  bool overwrite_ = false;
  std::uint64_t watermark_ = 0;
  perf_event_mmap_page* control_ = nullptr;

  std::atomic<bool> nest_{false};
  std::atomic<std::uint64_t> head_{0};  // rb->aux_head (handle holder only)
  std::uint64_t wakeup_ = 0;            // rb->aux_wakeup (handle holder only)
  std::atomic<std::uint64_t> write_pos_{0};
  std::atomic<std::uintptr_t> byte_owner_{0};  // aux_thread_token() of the holder, 0 when free
  std::atomic<std::uint64_t> store_end_{0};
  std::atomic<AuxWriter*> writer_{nullptr};

  // A trace entry is a few words: 8 to 32 bytes are two overlapping moves each way, inline (a call
  // to memcpy costs more than the copy). Longer or shorter pieces go to memcpy.
  static void copy_in(std::uint8_t* dst, const std::uint8_t* src, std::size_t len) {
    if (len - 8 <= 8) {
      std::uint64_t first, last;
      std::memcpy(&first, src, 8);
      std::memcpy(&last, src + len - 8, 8);
      std::memcpy(dst, &first, 8);
      std::memcpy(dst + len - 8, &last, 8);
    } else if (len - 17 <= 15) {
      unsigned char first[16], last[16];
      std::memcpy(first, src, 16);
      std::memcpy(last, src + len - 16, 16);
      std::memcpy(dst, first, 16);
      std::memcpy(dst + len - 16, last, 16);
    } else {
      std::memcpy(dst, src, len);
    }
  }
  bool revoke_writer(std::uintptr_t self);  // byte lock held
  void store_wrapping(std::uint64_t pos, const void* src, std::size_t len);
};

}  // namespace userperf::ring
