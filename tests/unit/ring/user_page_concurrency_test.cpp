// The control page's two seqcount writers, DataRing::update_user_page (the engine's control path)
// and refresh_user_time (the write path, after a TSC clock re-anchor), never interleave: a reader
// under the seqcount always finds a page written by one of them whole.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>

#include "ring/data_ring.hpp"
#include "support/tsc_clock.hpp"

namespace userperf::ring {
namespace {

TEST(UserPageWriters, UpdateAndRefreshNeverInterleave) {
  if (!support::tsc_clock_in_use()) GTEST_SKIP() << "no invariant TSC: nothing is republished";
  std::unique_ptr<DataRing> ring;
  ASSERT_EQ(DataRing::create(1, RingConfig{}, ring), 0);
  const perf_event_mmap_page* page = ring->control();
  std::atomic<bool> stop{false};
  // Each update carries a `now` of its own; time_enabled = time_running = now, so every whole
  // page has time_zero - time_offset == time_enabled == time_running.
  std::thread control([&] {
    for (std::uint64_t now = 1; !stop.load(); ++now) {
      UserPageTimes t;
      t.index = 0;
      t.offset = static_cast<std::int64_t>(now);
      t.time_enabled = now;
      t.time_running = now;
      t.now = now;
      t.clock = UserPageClock::kTimeAndZero;
      ring->update_user_page(t);
    }
  });
  std::thread write_path([&] {
    while (!stop.load()) {
      support::tsc_reanchor();
      for (int i = 0; i < 10; ++i) ring->refresh_user_time();
    }
  });
  std::uint64_t checked = 0;
  std::uint64_t torn = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (std::chrono::steady_clock::now() < end) {
    std::atomic_ref<const std::uint32_t> lock(page->lock);
    const std::uint32_t seq = lock.load(std::memory_order_acquire);
    if (seq & 1) continue;
    const std::uint64_t zero =
        std::atomic_ref<const __u64>(page->time_zero).load(std::memory_order_acquire);
    const std::uint64_t offset =
        std::atomic_ref<const __u64>(page->time_offset).load(std::memory_order_acquire);
    const std::uint64_t enabled =
        std::atomic_ref<const __u64>(page->time_enabled).load(std::memory_order_acquire);
    const std::uint64_t running =
        std::atomic_ref<const __u64>(page->time_running).load(std::memory_order_acquire);
    if (lock.load(std::memory_order_relaxed) != seq) continue;
    if (enabled == 0) continue;  // before the first update
    ++checked;
    if (zero - offset != enabled || running != enabled) ++torn;
  }
  stop.store(true);
  control.join();
  write_path.join();
  EXPECT_GT(checked, 1000u);
  EXPECT_EQ(torn, 0u);
  EXPECT_EQ(page->lock % 2, 0u);
}

}  // namespace
}  // namespace userperf::ring
