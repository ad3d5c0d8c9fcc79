// DataRing: the kernel's struct perf_buffer for the data area. Producer-private state (reservation
// head, nest count, lost count, wakeup stamps) lives here; the control page and the data pages
// live in a memfd that consumers map (RingMemory).
//
// Writers may nest (a signal handler interrupting a write on the same thread) and may run on
// several threads at once (events of several threads redirected into one ring, engine writes from
// a control thread). Two write disciplines, see output_handle.cpp:
// - Single-writer (the kernel's): a ring whose events all sample one thread (RingConfig::
//   single_writer) is written by that thread alone, with the kernel's nest count and unlocked
//   read-modify-writes (local_ops.hpp) that a signal on the same thread cannot tear.
// - Shared: a shared atomic writer count and compare-and-swap; data_head is published by whichever
//   writer leaves the ring last.
// A write from any other thread into a single-writer ring first makes it shared for good
// (make_shared): the owner's unlocked words must never meet another thread's writes.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "ring/ring_memory.hpp"
#include "support/tsc_clock.hpp"
#include "support/wakeup_pipe.hpp"

namespace userperf::ring {

class AuxRing;

struct RingConfig {
  bool overwrite = false;       // mapped read-only: data_tail is ignored, old records overwritten
  bool backward = false;        // attr.write_backward: head moves down from 0
  std::uint64_t watermark = 0;  // bytes between position wakeups; 0 selects data_size / 2
  // The thread every writer is expected to run on (its events sample that thread), or 0 for any.
  // Honoured only where the process barrier works (support/process_barrier.hpp).
  pid_t single_writer = 0;
};

// Which of the TSC clock's conversion (support/tsc_clock.hpp) a control page publishes: the
// kernel's arch_perf_update_userpage on x86, where the perf clock is the TSC's.
enum class UserPageClock : std::uint8_t {
  kNone,         // the event's clock is not the TSC clock (a use_clockid other than MONOTONIC)
  kTime,         // cap_user_time: time_mult, time_shift, time_offset (use_clockid MONOTONIC)
  kTimeAndZero,  // and cap_user_time_zero: time_zero (no use_clockid)
};

// The self-monitoring block of the control page (offsets 8..95), written under its seqcount.
struct UserPageTimes {
  std::uint32_t index = 0;
  std::int64_t offset = 0;
  std::uint64_t time_enabled = 0;
  std::uint64_t time_running = 0;
  // The event's clock reading time_enabled and time_running were computed at: time_offset is
  // time_zero - now (the kernel's "offset - now"), so that a consumer's
  //   time_enabled + time_offset + quot * time_mult + ((rem * time_mult) >> time_shift)
  // is time_enabled at the TSC value it converts.
  std::uint64_t now = 0;
  UserPageClock clock = UserPageClock::kNone;
};

// Position wakeups: true when a writer whose record ends `distance` bytes into the ring has gone
// more than `watermark` bytes past the last stamp. Signed, because a concurrent writer may
// already have moved the stamp beyond this writer's distance: that is not a crossing.
constexpr bool passed_watermark(std::uint64_t distance, std::uint64_t stamp,
                                std::uint64_t watermark) {
  return static_cast<std::int64_t>(distance - stamp) > static_cast<std::int64_t>(watermark);
}

class DataRing {
 public:
  // data_pages: 0 (control page only: every write fails without counting) or a power of two.
  static int create(std::size_t data_pages, const RingConfig& config,
                    std::unique_ptr<DataRing>& out);
  // A ring whose memory is made later, by materialize(): what a producer that may never write
  // sets up for the cost of one allocation (the recorder's agent: a recorded process that ends
  // before its first sample). Until then it has no control page, memfd or wakeup channel, and
  // nothing may write to it.
  static int create_deferred(std::size_t data_pages, const RingConfig& config,
                             std::unique_ptr<DataRing>& out);
  // SIGNAL-SAFE (system calls and stores only): the memfd, its mapping, the control page and the
  // wakeup channel of a deferred ring. 0, or -errno (the ring stays deferred). Once only: the
  // caller makes sure no two run at once.
  int materialize();
  bool materialized() const { return materialized_.load(std::memory_order_acquire); }
  ~DataRing();
  DataRing(const DataRing&) = delete;
  DataRing& operator=(const DataRing&) = delete;

  perf_event_mmap_page* control() const { return memory_.control(); }
  std::uint8_t* data() const { return data_; }
  std::uint64_t data_size() const { return memory_.data_size(); }
  std::size_t data_pages() const { return requested_pages_; }
  std::size_t mapping_length() const { return memory_.length(); }
  int memfd() const { return memory_.fd(); }
  const RingConfig& config() const { return config_; }
  std::uint64_t watermark() const { return watermark_; }

  // PERF_EVENT_IOC_PAUSE_OUTPUT: while paused every write is dropped and counted as lost.
  void set_paused(bool paused) { paused_.store(paused, std::memory_order_seq_cst); }
  bool paused() const { return paused_.load(std::memory_order_relaxed); }
  // Counts records dropped outside the reservation path (refused as oversized, for example).
  // SIGNAL-SAFE.
  void add_lost(std::uint64_t n);
  // Records dropped since the last PERF_RECORD_LOST was written.
  std::uint64_t pending_lost() const {
    return std::atomic_ref<const std::uint64_t>(lost_).load(std::memory_order_relaxed);
  }
  // The thread that writes it alone, or 0 once it is (or always was) shared.
  pid_t single_writer() const { return owner_.load(std::memory_order_relaxed); }
  // Ends single-writer mode for good: afterwards every writer takes the shared path. Waits for
  // the owner's write in progress, if any (a process barrier, then until its nest count is 0).
  // SIGNAL-SAFE; never from the owner thread.
  void make_shared();

  // The consumer's wakeup channel: readable after each wakeup, POLLHUP once hang_up() was called
  // (or the producer process died) and no other process holds the write end.
  int wakeup_fd() const { return wake_pipe_.read_fd(); }
  // Drains the wakeup channel; true if at least one wakeup was pending (poll's "clear on report").
  bool take_wakeup() { return wake_pipe_.drain(); }
  // Wakes consumers now (state changes they must re-poll for, such as the task exiting).
  void wake_now() { wake(); }
  // The producer side goes away: consumers polling wakeup_fd() see POLLHUP.
  void hang_up() { wake_pipe_.hang_up(); }

  // The engine's control path (under its lock; not signal-safe: it may wait for the write path's
  // republish below): index, offset, times, and the TSC clock's conversion as `times.clock` says
  // (cap_user_time, cap_user_time_zero, time_mult, time_shift, time_offset, time_zero; all 0 when
  // the clock is kNone or the TSC clock is not in use). cap_user_time_short stays 0.
  void update_user_page(const UserPageTimes& times);

  // SIGNAL-SAFE. For the write path: republishes the control page's time fields when the TSC
  // clock was re-anchored since they were written (its generation moved), keeping time_enabled,
  // time_running and the `now` of the last update_user_page (time_offset = new time_zero - now).
  // Call it after writing a record into this ring (OutputHandle's end, or after it), on any
  // ring, as often as records are written: when nothing changed it is one load and a compare.
  // When another writer of the page holds it (the engine's update_user_page on another thread,
  // or the republish this signal handler interrupted) it does nothing: the next record retries.
  void refresh_user_time() {
    if (__builtin_expect(
            support::tsc_generation() == user_time_generation_.load(std::memory_order_relaxed),
            1)) {
      return;
    }
    refresh_user_time_slow();
  }

  // The buffer's AUX area (rb->aux_*), owned by whoever mapped it; nullptr when not mapped.
  AuxRing* aux() const { return aux_.load(std::memory_order_acquire); }
  void set_aux(AuxRing* aux) { aux_.store(aux, std::memory_order_release); }

 private:
  friend class OutputHandle;
  DataRing() = default;

  // The shared discipline.
  void leave();  // a writer leaves; the last one out publishes data_head (signal-safe)
  void refresh_user_time_slow();
  // Under page_writer_, inside the page's seqcount: the clock's fields as user_clock_ says, from
  // `conversion` (nullptr: the TSC clock has none, every field 0).
  void store_user_time(perf_event_mmap_page* page, const support::TscConversion* conversion);
  void publish_head(std::uint64_t head);
  // The single-writer discipline: whether the calling thread may write as the owner (then its
  // nest count is taken, and leave_local() must follow), and the kernel's perf_output_put_handle.
  bool enter_local();
  void leave_local();
  // A shared-path writer of a ring that was single-writer: the transition is complete.
  void settle_shared() {
    if (!settled_.load(std::memory_order_acquire)) settle_shared_slow();
  }
  void settle_shared_slow();
  void wake() { wake_pipe_.wake(); }
  void take_pending_wakeup();

  RingMemory memory_;
  RingConfig config_;
  std::size_t requested_pages_ = 0;
  std::atomic<bool> materialized_{false};
  std::uint8_t* data_ = nullptr;  // memory_.data(), cached for the write path
  std::uint64_t mask_ = 0;
  std::uint64_t watermark_ = 0;
  // Words both disciplines share: atomic_ref (locked) on the shared path, local_ops on the owner's.
  alignas(8) std::uint64_t head_ = 0;        // reservation pointer (free-running)
  alignas(8) std::uint64_t lost_ = 0;        // records dropped since the last LOST record
  alignas(8) std::uint64_t wakeup_ = 0;      // position of the last wakeup stamp
  alignas(8) std::uint64_t events_ = 0;      // samples counted towards attr.wakeup_events
  std::atomic<std::uint32_t> writers_{0};    // shared path: writers inside, nested or concurrent
  std::uint32_t nest_ = 0;                   // single-writer path: the owner's nest count
  std::atomic<pid_t> owner_{0};              // the single writer; 0: shared
  std::atomic<bool> settled_{true};          // shared, and no owner write can be in progress
  std::atomic<bool> wakeup_pending_{false};  // a stamp was issued; wake at the next publish
  std::atomic<bool> paused_{false};
  std::atomic<AuxRing*> aux_{nullptr};
  // The control page's seqcount has two writers, update_user_page and refresh_user_time: this
  // lock keeps them from interleaving (the second would make the count even mid-write).
  std::atomic<bool> page_writer_{false};
  // What update_user_page last published, for refresh_user_time (written under page_writer_).
  UserPageClock user_clock_ = UserPageClock::kNone;
  std::uint64_t user_now_ = 0;
  std::atomic<std::uint64_t> user_time_generation_{0};  // the TSC clock's, as last published
  support::WakeupPipe wake_pipe_;
};

}  // namespace userperf::ring
