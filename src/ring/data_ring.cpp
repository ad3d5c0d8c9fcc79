#include "ring/data_ring.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>

#include "support/descriptors.hpp"
#include "support/process_barrier.hpp"

namespace userperf::ring {

int DataRing::create(std::size_t data_pages, const RingConfig& config,
                     std::unique_ptr<DataRing>& out) {
  std::unique_ptr<DataRing> ring;
  if (const int err = create_deferred(data_pages, config, ring); err != 0) return err;
  if (const int err = ring->materialize(); err != 0) return err;
  out = std::move(ring);
  return 0;
}

int DataRing::create_deferred(std::size_t data_pages, const RingConfig& config,
                              std::unique_ptr<DataRing>& out) {
  if (data_pages != 0 && (data_pages & (data_pages - 1)) != 0) return -EINVAL;
  (void)page_size();  // its first call initializes a static: not in materialize's signal handler
  std::unique_ptr<DataRing> ring(new DataRing());
  ring->config_ = config;
  ring->requested_pages_ = data_pages;
  out = std::move(ring);
  return 0;
}

int DataRing::materialize() {
  if (materialized()) return 0;
  if (const int err = memory_.create(requested_pages_, "userperf-ring"); err != 0) return err;
  if (const int err = wake_pipe_.open(); err != 0) return err;
  const std::uint64_t size = data_size();
  mask_ = size == 0 ? 0 : size - 1;
  // rb_alloc: watermark = min(wakeup_watermark, size) when asked for, else half the buffer.
  watermark_ = config_.watermark != 0 ? std::min(config_.watermark, size) : size / 2;
  // A ring without data pages is permanently paused; writes fail without lost accounting.
  paused_.store(size == 0);
  perf_event_mmap_page* page = control();
  page->size = offsetof(perf_event_mmap_page, __reserved);
  page->cap_bit0_is_deprecated = 1;
  page->data_offset = page_size();
  page->data_size = size;
  data_ = memory_.data();
  // Single-writer only where another thread's first write can end it safely (make_shared).
  if (config_.single_writer > 0 && support::process_barrier_available()) {
    settled_.store(false, std::memory_order_relaxed);
    owner_.store(config_.single_writer, std::memory_order_relaxed);
  }
  materialized_.store(true, std::memory_order_release);
  return 0;
}

DataRing::~DataRing() = default;

// Seqcount writer: the acq_rel increments order the field stores between them (no standalone
// fences, which TSan cannot model); the fields are stored atomically because a reader in another
// process may load them at any time.
void DataRing::update_user_page(const UserPageTimes& times) {
  if (!materialized()) return;  // no control page yet; materialize() starts it afresh
  while (page_writer_.exchange(true, std::memory_order_acquire)) sched_yield();
  // A re-anchor in progress (on another thread: this is not a signal handler) ends soon; the
  // page must not lose cap_user_time meanwhile.
  support::TscConversion conversion;
  support::TscConversionStatus status;
  while ((status = support::tsc_read_conversion(conversion)) ==
         support::TscConversionStatus::kBusy) {
    sched_yield();
  }
  const bool known = status == support::TscConversionStatus::kOk;
  perf_event_mmap_page* page = control();
  std::atomic_ref<std::uint32_t> lock(page->lock);
  lock.fetch_add(1, std::memory_order_acq_rel);
  std::atomic_ref<__u32>(page->index).store(times.index, std::memory_order_relaxed);
  std::atomic_ref<__s64>(page->offset).store(times.offset, std::memory_order_relaxed);
  std::atomic_ref<__u64>(page->time_enabled).store(times.time_enabled, std::memory_order_relaxed);
  std::atomic_ref<__u64>(page->time_running).store(times.time_running, std::memory_order_relaxed);
  user_clock_ = times.clock;
  user_now_ = times.now;
  store_user_time(page, known ? &conversion : nullptr);
  lock.fetch_add(1, std::memory_order_release);
  page_writer_.store(false, std::memory_order_release);
}

void DataRing::refresh_user_time_slow() {
  if (!materialized()) return;
  if (page_writer_.exchange(true, std::memory_order_acquire)) return;  // the next record retries
  support::TscConversion conversion;
  const support::TscConversionStatus status = support::tsc_read_conversion(conversion);
  if (status != support::TscConversionStatus::kBusy) {  // busy: the next record retries
    perf_event_mmap_page* page = control();
    std::atomic_ref<std::uint32_t> lock(page->lock);
    lock.fetch_add(1, std::memory_order_acq_rel);
    store_user_time(page, status == support::TscConversionStatus::kOk ? &conversion : nullptr);
    lock.fetch_add(1, std::memory_order_release);
  }
  page_writer_.store(false, std::memory_order_release);
}

// arch_perf_update_userpage (x86): cap_user_time with time_mult, time_shift and
// time_offset = offset - now; cap_user_time_zero with time_zero = offset unless use_clockid.
// Here `offset` is the TSC clock's time_zero and `now` the event clock's reading behind the
// page's time_enabled. Without a conversion every one of these is 0.
void DataRing::store_user_time(perf_event_mmap_page* page,
                               const support::TscConversion* conversion) {
  // The generation as of this reading (or as of now when there is nothing to publish): the write
  // path's check stays one compare until the clock changes again.
  user_time_generation_.store(
      conversion != nullptr ? conversion->generation : support::tsc_generation(),
      std::memory_order_relaxed);
  const bool time = conversion != nullptr && user_clock_ != UserPageClock::kNone;
  const bool zero = time && user_clock_ == UserPageClock::kTimeAndZero;
  perf_event_mmap_page caps{};
  caps.capabilities = std::atomic_ref<__u64>(page->capabilities).load(std::memory_order_relaxed);
  caps.cap_user_time = time ? 1 : 0;
  caps.cap_user_time_zero = zero ? 1 : 0;
  caps.cap_user_time_short = 0;
  std::atomic_ref<__u64>(page->capabilities).store(caps.capabilities, std::memory_order_relaxed);
  std::atomic_ref<__u16>(page->time_shift)
      .store(time ? conversion->time_shift : 0, std::memory_order_relaxed);
  std::atomic_ref<__u32>(page->time_mult)
      .store(time ? conversion->time_mult : 0, std::memory_order_relaxed);
  std::atomic_ref<__u64>(page->time_offset)
      .store(time ? conversion->time_zero - user_now_ : 0, std::memory_order_relaxed);
  std::atomic_ref<__u64>(page->time_zero)
      .store(zero ? conversion->time_zero : 0, std::memory_order_relaxed);
}

}  // namespace userperf::ring
