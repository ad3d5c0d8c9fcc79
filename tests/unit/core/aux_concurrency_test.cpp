// AUX sampling while the trace source writes from another thread (run under TSan too): every sample
// must carry a window of the trace that was complete when it was copied, never torn bytes.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "support/aux_events.hpp"

namespace userperf {
namespace {

TEST(AuxSampleConcurrency, SamplesSeeWholeWindowsWhileAnotherThreadWrites) {
  perf_event_attr lattr = testing::aux_attr();
  const int leader = testing::event_open(&lattr, 0, -1, -1, 0);
  ASSERT_GE(leader, 0);
  perf_event_attr sattr = testing::test_attr(PERF_SAMPLE_AUX);
  sattr.aux_sample_size = 512;
  const int sampler = testing::event_open(&sattr, 0, -1, leader, 0);
  ASSERT_GE(sampler, 0) << strerror(errno);
  {
    testing::MappedAux maps(leader, 4, 1, /*overwrite=*/true);  // one page: wraps constantly
    testing::MappedRing ring(sampler, 256);
    ASSERT_TRUE(maps.ok());
    ASSERT_EQ(testing::event_ioctl(leader, PERF_EVENT_IOC_ENABLE, 0), 0);
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> written{0};
    std::thread writer([&] {
      // Entries of three words {k, k, k}: a torn copy would show mismatched words.
      for (std::uint64_t k = 1; !stop.load(std::memory_order_relaxed); ++k) {
        const std::uint64_t entry[3] = {k, k, k};
        if (testing::aux_write(leader, entry, sizeof entry) == core::AuxStream::Append::kOk) {
          written.store(k, std::memory_order_relaxed);
        }
      }
    });
    while (written.load() < 1000) std::this_thread::yield();
    int samples = 0;
    int checked_windows = 0;
    for (int round = 0; round < 200; ++round) {
      ASSERT_EQ(testing::fire(sampler, 1), 1u);
      for (const auto& r : ring.drain()) {
        if (testing::record_type(r) != PERF_RECORD_SAMPLE) continue;
        ++samples;
        const auto size = testing::field_at<std::uint64_t>(r, 8);
        ASSERT_EQ(size, 512u);
        // The window ends at an entry boundary (the write position); walk back entry by entry.
        const std::uint8_t* end = r.data() + 16 + size;
        std::uint64_t prev = 0;
        for (std::size_t e = 1; e * 24 <= size; ++e) {
          std::uint64_t w[3];
          std::memcpy(w, end - e * 24, sizeof w);
          ASSERT_EQ(w[0], w[1]);
          ASSERT_EQ(w[1], w[2]);
          if (prev != 0) {
            ASSERT_EQ(w[0] + 1, prev) << "consecutive entries";
          }
          prev = w[0];
        }
        ++checked_windows;
      }
    }
    stop.store(true);
    writer.join();
    EXPECT_EQ(samples, 200);
    EXPECT_EQ(checked_windows, 200);
  }
  testing::event_close(sampler);
  testing::event_close(leader);
}

}  // namespace
}  // namespace userperf
