// What the benchmarks share: a mapped test-PMU event, the consumer's two stores, and a ring filled
// once for the consumer-side benchmarks (reader, recorder drain).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "api/engine_instance.hpp"
#include "core/sample_output.hpp"
#include "support/test_events.hpp"
#include "userperf/userperf.h"

namespace userperf::bench {

inline std::uint64_t load_head(perf_event_mmap_page* control) {
  return std::atomic_ref<__u64>(control->data_head).load(std::memory_order_acquire);
}

// The consumer keeping up: everything published so far is read.
inline void consume_all(perf_event_mmap_page* control) {
  std::atomic_ref<__u64>(control->data_tail).store(load_head(control), std::memory_order_release);
}

// A test-PMU event opened and mapped (1 + data_pages pages) through the C API, as a profiler
// would. Raises the engine's sample-rate limit: the default 400 samples per 4 ms tick would
// throttle a benchmark after 400 iterations.
class BenchEvent {
 public:
  BenchEvent(std::uint64_t sample_type, std::size_t data_pages)
      : BenchEvent(testing::test_attr(sample_type), data_pages) {}
  BenchEvent(perf_event_attr attr, std::size_t data_pages) {
    core::EngineLimits limits = api::engine().limits();
    limits.max_sample_rate = 1u << 30;
    api::engine().set_limits(limits);
    fd_ = userperf_perf_event_open(&attr, 0, -1, -1, 0);
    if (fd_ < 0) return;
    event_ = api::engine().event(fd_);
    mapped_ = std::make_unique<testing::MappedRing>(fd_, data_pages);
    if (mapped_->ok()) rb_ = event_->rb.load();
  }
  ~BenchEvent() {
    mapped_.reset();  // unmap before close, as a profiler does
    if (fd_ >= 0) userperf_close(fd_);
  }
  BenchEvent(const BenchEvent&) = delete;
  BenchEvent& operator=(const BenchEvent&) = delete;

  bool ok() const { return rb_ != nullptr; }
  int fd() const { return fd_; }
  core::Event& event() const { return *event_; }
  ring::DataRing& rb() const { return *rb_; }
  testing::MappedRing& mapped() const { return *mapped_; }
  perf_event_mmap_page* consumer_control() const { return mapped_->control(); }

 private:
  int fd_ = -1;
  core::Event* event_ = nullptr;
  std::unique_ptr<testing::MappedRing> mapped_;
  ring::DataRing* rb_ = nullptr;
};

// A BenchEvent whose ring holds one full fill. The fill starts half-way round (written and
// consumed first) so that it wraps once, and goes on until the next record would not fit
// (ring_buffer_has_space: at most data_size - 1 bytes outstanding). Each record is `data` after
// next(i) set up record i; its size is what prepare_sample computes for it.
class FilledRing : public BenchEvent {
 public:
  using BenchEvent::BenchEvent;

  template <class Next>
  void fill(core::SampleData& data, Next&& next) {
    perf_event_mmap_page* control = consumer_control();
    const std::uint64_t size = mapped().view.data_size;
    std::uint64_t i = 0;
    for (; load_head(control) < size / 2; ++i) {
      next(i);
      core::output_sample(event(), data);
    }
    start_ = load_head(control);
    rewind();
    for (;; ++i, ++records_) {
      next(i);
      core::PreparedSample sized;
      if (!core::prepare_sample(event(), data, sized)) break;
      if (load_head(control) - start_ + sized.size > size - 1) break;
      core::output_sample(event(), data);
    }
    bytes_ = load_head(control) - start_;
  }
  // A fill was written and nothing of it lost.
  bool filled() const { return ok() && records_ != 0 && event().lost_samples.load() == 0; }
  // data_tail back to where the fill began: all of it unread again.
  void rewind() const {
    std::atomic_ref<__u64>(consumer_control()->data_tail).store(start_, std::memory_order_release);
  }
  const ring::RingView& view() const { return mapped().view; }
  std::uint64_t start() const { return start_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t records() const { return records_; }

 private:
  std::uint64_t start_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint64_t records_ = 0;
};

}  // namespace userperf::bench
