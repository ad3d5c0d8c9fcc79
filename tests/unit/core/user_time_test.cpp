// The control page's clock (arch_perf_update_userpage): a consumer converting the TSC with the
// page's time_zero/time_mult/time_shift gets the TIME the engine stamps, time_offset extends
// time_enabled, and the fields are 0 where the event's clock is not the TSC clock.
#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <cstdint>

#include "support/test_events.hpp"
#include "support/tsc_clock.hpp"

namespace userperf {
namespace {

using testing::field_at;
using testing::fire;
using testing::MappedRing;
using testing::test_attr;

// The page's clock block, read under its seqcount as a consumer in another process would.
struct PageClock {
  bool user_time, user_time_zero, user_time_short;
  std::uint16_t shift;
  std::uint32_t mult;
  std::uint64_t offset, zero, time_enabled;
};

PageClock read_page_clock(const perf_event_mmap_page* page) {
  for (;;) {
    std::atomic_ref<const std::uint32_t> lock(page->lock);
    const std::uint32_t seq = lock.load(std::memory_order_acquire);
    PageClock c{};
    const volatile perf_event_mmap_page* p = page;
    c.user_time = p->cap_user_time;
    c.user_time_zero = p->cap_user_time_zero;
    c.user_time_short = p->cap_user_time_short;
    c.shift = p->time_shift;
    c.mult = p->time_mult;
    c.offset = p->time_offset;
    c.zero = p->time_zero;
    c.time_enabled = p->time_enabled;
    std::atomic_thread_fence(std::memory_order_acquire);
    if (!(seq & 1) && lock.load(std::memory_order_relaxed) == seq) return c;
  }
}

std::uint64_t sample_time(MappedRing& ring) {
  const auto records = ring.drain();
  if (records.size() != 1 || testing::record_type(records[0]) != PERF_RECORD_SAMPLE) return 0;
  return field_at<std::uint64_t>(records[0], 8);  // sample_type TIME alone: the body is TIME
}

TEST(UserPageClock, ConsumerConvertsTheTscToTheEnginesTime) {
  // 2,000 samples in a few milliseconds: above the default rate, which would throttle.
  core::Engine& e = testing::engine();
  const core::EngineLimits saved = e.limits();
  core::EngineLimits high = saved;
  high.max_sample_rate = 100'000'000;
  e.set_limits(high);
  perf_event_attr attr = test_attr(PERF_SAMPLE_TIME);
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0);
  {
    MappedRing ring(fd, 1);
    ASSERT_TRUE(ring.ok());
    if (!support::tsc_clock_in_use()) {
      const PageClock c = read_page_clock(ring.control());
      EXPECT_FALSE(c.user_time);
      EXPECT_FALSE(c.user_time_zero);
      EXPECT_EQ(c.mult, 0u);
      testing::event_close(fd);
      e.set_limits(saved);
      GTEST_SKIP() << "no invariant TSC: the page publishes no conversion";
    }
    int checked = 0;
    for (int i = 0; i < 2000; ++i) {
      // The write path's republish (what OutputHandle's caller does after each record).
      testing::engine().event(fd)->rb.load()->refresh_user_time();
      const PageClock c = read_page_clock(ring.control());
      ASSERT_TRUE(c.user_time);
      ASSERT_TRUE(c.user_time_zero);
      ASSERT_FALSE(c.user_time_short);
      const std::uint64_t generation = support::tsc_generation();
      const std::uint64_t before = support::tsc_to_ns(support::read_tsc(), c.zero, c.mult, c.shift);
      fire(fd, 1);
      const std::uint64_t after = support::tsc_to_ns(support::read_tsc(), c.zero, c.mult, c.shift);
      const std::uint64_t time = sample_time(ring);
      ASSERT_NE(time, 0u);
      if (support::tsc_generation() != generation) continue;  // re-anchored meanwhile
      // The engine's reading lies between the consumer's two conversions (the per-thread clamp
      // may hold it at an earlier reading of this thread, so allow that much below).
      EXPECT_GE(time + 100, before);
      EXPECT_LE(time, after);
      support::TscConversion now;
      ASSERT_TRUE(support::tsc_conversion(now));
      if (now.generation == generation) {
        EXPECT_EQ(c.zero, now.time_zero);
        EXPECT_EQ(c.mult, now.time_mult);
        EXPECT_EQ(c.shift, now.time_shift);
      }
      ++checked;
      if (i % 100 == 0) {
        ASSERT_TRUE(support::tsc_reanchor());
      }
    }
    EXPECT_GT(checked, 1000);
  }
  testing::event_close(fd);
  e.set_limits(saved);
}

// time_enabled + time_offset + conversion(cyc) is time_enabled at cyc (the kernel's "delta").
TEST(UserPageClock, TimeOffsetExtendsTimeEnabled) {
  if (!support::tsc_clock_in_use()) GTEST_SKIP() << "no invariant TSC";
  perf_event_attr attr = test_attr(0);
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED;
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0);
  {
    MappedRing ring(fd, 1);
    ASSERT_TRUE(ring.ok());
    for (int i = 0; i < 100; ++i) {
      if (i % 10 == 5) {
        // A re-anchor between the engine's update and the read: the republish keeps time_offset
        // tied to the same time_enabled (time_offset = new time_zero - the same now).
        const PageClock old = read_page_clock(ring.control());
        ASSERT_TRUE(support::tsc_reanchor());
        testing::engine().event(fd)->rb.load()->refresh_user_time();
        const PageClock c = read_page_clock(ring.control());
        EXPECT_EQ(c.zero - c.offset, old.zero - old.offset) << "the same `now` behind both";
        EXPECT_EQ(c.time_enabled, old.time_enabled);
      }
      const PageClock c = read_page_clock(ring.control());
      const std::uint64_t before = support::read_tsc();
      std::uint64_t v[2] = {};
      ASSERT_EQ(testing::event_read(fd, v, sizeof v), 16);
      const std::uint64_t after = support::read_tsc();
      const std::uint64_t low =
          c.time_enabled + support::tsc_to_ns(before, c.offset, c.mult, c.shift);
      const std::uint64_t high =
          c.time_enabled + support::tsc_to_ns(after, c.offset, c.mult, c.shift);
      EXPECT_GE(v[1] + 100, low);
      EXPECT_LE(v[1], high + 100);
    }
  }
  testing::event_close(fd);
}

// The kernel: cap_user_time_zero "doesn't make sense when we're using a different time base for
// the records" (use_clockid). With CLOCK_MONOTONIC the TIME is still the TSC clock's and
// time_enabled is in it: cap_user_time stays; with any other clock nothing is published.
TEST(UserPageClock, UseClockid) {
  const bool tsc = support::tsc_clock_in_use();
  for (const clockid_t clock :
       {CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_TAI, CLOCK_MONOTONIC_RAW}) {
    perf_event_attr attr = test_attr(PERF_SAMPLE_TIME);
    attr.use_clockid = 1;
    attr.clockid = clock;
    const int fd = testing::event_open(&attr, 0, -1, -1, 0);
    ASSERT_GE(fd, 0) << clock;
    {
      MappedRing ring(fd, 1);
      ASSERT_TRUE(ring.ok());
      const PageClock c = read_page_clock(ring.control());
      const bool published = tsc && clock == CLOCK_MONOTONIC;
      EXPECT_EQ(c.user_time, published) << clock;
      EXPECT_FALSE(c.user_time_zero) << clock;
      EXPECT_FALSE(c.user_time_short) << clock;
      EXPECT_EQ(c.zero, 0u) << clock;
      EXPECT_EQ(c.mult != 0, published) << clock;
      if (!published) {
        EXPECT_EQ(c.shift, 0u) << clock;
        EXPECT_EQ(c.offset, 0u) << clock;
      }
      // Republishing after a re-anchor keeps them as they are.
      if (tsc) {
        ASSERT_TRUE(support::tsc_reanchor());
      }
      testing::engine().event(fd)->rb.load()->refresh_user_time();
      const PageClock r = read_page_clock(ring.control());
      EXPECT_EQ(r.user_time, published) << clock;
      EXPECT_FALSE(r.user_time_zero) << clock;
      EXPECT_EQ(r.zero, 0u) << clock;
      if (!published) {
        EXPECT_EQ(r.mult, 0u) << clock;
      }
      // TIME is the event's clock.
      const std::uint64_t before = support::clock_gettime_ns(clock);
      fire(fd, 1);
      const std::uint64_t after = support::clock_gettime_ns(clock);
      const std::uint64_t time = sample_time(ring);
      EXPECT_GE(time + 1000, before) << clock;
      EXPECT_LE(time, after + 1000) << clock;
    }
    testing::event_close(fd);
  }
}

}  // namespace
}  // namespace userperf
