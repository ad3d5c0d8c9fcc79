// What the write-path benchmarks share: a mapped test-PMU event and the consumer's two stores.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "support/test_events.hpp"

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
  BenchEvent(std::uint64_t sample_type, std::size_t data_pages) {
    core::EngineLimits limits = core::Engine::instance().limits();
    limits.max_sample_rate = 1u << 30;
    core::Engine::instance().set_limits(limits);
    perf_event_attr attr = testing::test_attr(sample_type);
    fd_ = userperf_perf_event_open(&attr, 0, -1, -1, 0);
    if (fd_ < 0) return;
    event_ = core::Engine::instance().event(fd_);
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

}  // namespace userperf::bench
