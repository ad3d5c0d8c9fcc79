#include <gtest/gtest.h>

#include <cerrno>

#include "support/pmu/test_pmu.hpp"
#include "support/test_events.hpp"

namespace userperf {
namespace {

using testing::MappedRing;
using testing::test_attr;

TEST(Engine, SampleReachesTheRing) {
  perf_event_attr attr = test_attr(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    MappedRing ring(fd, 4);
    ASSERT_TRUE(ring.ok());
    EXPECT_EQ(ring.control()->data_offset, 4096u);
    EXPECT_EQ(ring.control()->data_size, 4u * 4096);
    core::SampleData data;
    data.ip = 0x1234;
    EXPECT_EQ(testing::fire(fd, 3, data), 3u);
    const auto records = ring.drain();
    ASSERT_EQ(records.size(), 3u);
    EXPECT_EQ(testing::record_type(records[0]), PERF_RECORD_SAMPLE);
    EXPECT_EQ(records[0].size(), 8u + 8 + 8 + 8);
    EXPECT_EQ(testing::field_at<std::uint64_t>(records[0], 8), 0x1234u);
  }
  EXPECT_EQ(testing::event_close(fd), 0);
}

}  // namespace
}  // namespace userperf
