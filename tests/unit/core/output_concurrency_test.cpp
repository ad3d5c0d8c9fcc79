// Events of several threads redirected into one ring (SET_OUTPUT), written concurrently while a
// consumer drains: every sample is delivered intact or accounted in a LOST record, and the LOST
// totals agree with each event's PERF_FORMAT_LOST.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "support/test_events.hpp"

namespace userperf {
namespace {

using testing::test_attr;

TEST(OutputConcurrency, RedirectedEventsShareOneRing) {
  constexpr int kEvents = 3;
  constexpr std::uint64_t kPerEvent = 30000;
  // Far above the default 400 samples per tick: this test is about the ring, not throttling.
  core::Engine& engine = testing::engine();
  const core::EngineLimits saved = engine.limits();
  core::EngineLimits high = saved;
  high.max_sample_rate = 1u << 30;
  engine.set_limits(high);
  perf_event_attr attr = test_attr(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_IP);
  attr.read_format = PERF_FORMAT_LOST | PERF_FORMAT_ID;
  std::vector<int> fds;
  for (int i = 0; i < kEvents; ++i) {
    fds.push_back(testing::event_open(&attr, -1, 0, -1, 0));
    ASSERT_GE(fds.back(), 0);
  }
  std::map<std::uint64_t, std::uint64_t> delivered;
  std::uint64_t lost_records = 0;
  std::uint64_t flush_samples = 0;
  {
    testing::MappedRing ring(fds[0], 8);
    ASSERT_TRUE(ring.ok());
    for (int i = 1; i < kEvents; ++i) {
      ASSERT_EQ(testing::event_ioctl(fds[i], PERF_EVENT_IOC_SET_OUTPUT, fds[0]), 0);
    }
    std::atomic<int> running{kEvents};
    std::vector<std::thread> writers;
    for (int i = 0; i < kEvents; ++i) {
      writers.emplace_back([&, i] {
        core::SampleData data;
        data.ip = 0x1000 + i;
        for (std::uint64_t n = 0; n < kPerEvent; ++n) testing::fire(fds[i], 1, data);
        running.fetch_sub(1);
      });
    }
    auto drain = [&] {
      for (const auto& r : ring.drain()) {
        if (testing::record_type(r) == PERF_RECORD_LOST) {
          lost_records += testing::field_at<std::uint64_t>(r, 16);
          continue;
        }
        ASSERT_EQ(testing::record_type(r), PERF_RECORD_SAMPLE);
        ASSERT_EQ(r.size(), 32u);
        const auto id = testing::field_at<std::uint64_t>(r, 8);
        const auto ip = testing::field_at<std::uint64_t>(r, 16);
        ++delivered[id];
        // The ip identifies the writing thread; it must belong to the event the id names.
        ASSERT_EQ(ip - 0x1000,
                  static_cast<std::uint64_t>(
                      std::find_if(fds.begin(), fds.end(),
                                   [&](int fd) { return testing::engine().event(fd)->id == id; }) -
                      fds.begin()));
      }
    };
    while (running.load() > 0) drain();
    for (auto& t : writers) t.join();
    drain();
    // Bring out a LOST count still pending with more samples of event 0, draining as we go (the
    // ring may be full). Each attempt is delivered or lost like any other sample.
    core::SampleData flush;
    flush.ip = 0x1000;
    while (testing::engine().event(fds[0])->rb.load()->pending_lost() != 0) {
      testing::fire(fds[0], 1, flush);
      ++flush_samples;
      drain();
    }
  }
  std::uint64_t total = 0, lost_by_events = 0;
  for (int fd : fds) {
    std::uint64_t v[3];
    ASSERT_EQ(testing::event_read(fd, v, sizeof v), 24);
    total += delivered[v[1]];
    lost_by_events += v[2];
  }
  EXPECT_EQ(total + lost_by_events, kEvents * kPerEvent + flush_samples);
  EXPECT_EQ(lost_records, lost_by_events);
  for (int fd : fds) testing::event_close(fd);
  engine.set_limits(saved);
}

}  // namespace
}  // namespace userperf
