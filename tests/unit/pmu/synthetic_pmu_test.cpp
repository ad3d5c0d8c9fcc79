// The synthetic source: its AUX bytes are the synthetic stream at their AUX positions, whether
// produced on the caller's thread or by its rate thread, in overwrite and normal mode.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "pmu/aux_sources/synthetic_pmu.hpp"
#include "support/trace_sources.hpp"
#include "trace/synthetic_format.hpp"

namespace userperf {
namespace {

using testing::MappedAux;
using testing::OwnedFd;
using testing::page;

std::uint64_t produce(int fd, std::uint64_t bytes) {
  core::Event* event = testing::engine().event(fd);
  if (event == nullptr) return 0;
  return static_cast<pmu::SyntheticPmu*>(event->pmu)->produce(*event, bytes);
}

TEST(SyntheticPmu, RefusesBadChunkSizes) {
  perf_event_attr attr = testing::source_attr("synthetic");
  ASSERT_GT(attr.type, 0u);
  attr.config2 = 12;
  EXPECT_EQ(testing::event_open(&attr, 0, -1, -1, 0), -1);
  EXPECT_EQ(errno, EINVAL);
  attr.config2 = 2 << 20;
  EXPECT_EQ(testing::event_open(&attr, 0, -1, -1, 0), -1);
  EXPECT_EQ(errno, EINVAL);
}

TEST(SyntheticPmu, OverwriteAreaHoldsTheNewestStreamBytes) {
  perf_event_attr attr = testing::source_attr("synthetic");
  attr.config1 = 0xfeed'f00d;
  attr.config2 = 1024;
  OwnedFd fd(testing::event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(fd, 0) << strerror(errno);
  MappedAux m(fd, 4, 4, /*overwrite=*/true);
  ASSERT_TRUE(m.ok()) << strerror(m.map_errno);
  EXPECT_EQ(produce(fd, 4096), 0u);  // disabled: nothing
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  // Four times the area, in chunks that do not divide it evenly.
  EXPECT_EQ(produce(fd, 4 * m.aux_length + 1000), 4 * m.aux_length + 1000);
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
  std::uint64_t head = 0;
  const auto bytes = testing::newest_bytes(m, &head);
  EXPECT_EQ(head, 4 * m.aux_length + 1000);
  ASSERT_EQ(bytes.size(), m.aux_length);
  const Expected<void> verified = trace::verify_synthetic(attr.config1, head, bytes);
  EXPECT_TRUE(verified) << verified.error().offset;
  trace::SyntheticWindow w;
  ASSERT_TRUE(trace::decode_synthetic(bytes, w));
  EXPECT_EQ(w.start_position, head - m.aux_length);
  std::uint64_t count = 0;
  ASSERT_EQ(testing::event_read(fd, &count, sizeof count), 8);
  EXPECT_EQ(count, head);
}

TEST(SyntheticPmu, RateThreadFillsANormalArea) {
  perf_event_attr attr = testing::source_attr("synthetic");
  attr.config = 8 << 20;  // 8 MB/s
  attr.config1 = 99;
  attr.config2 = 512;
  OwnedFd fd(testing::event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(fd, 0) << strerror(errno);
  MappedAux m(fd, 4, 16, /*overwrite=*/false);
  ASSERT_TRUE(m.ok()) << strerror(m.map_errno);
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  // Drain as it grows, checking each window at its position, until some chunks went through.
  std::uint64_t consumed = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (consumed < 64 * 1024 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const auto bytes = testing::consume(m);
    const Expected<void> verified =
        trace::verify_synthetic(attr.config1, consumed + bytes.size(), bytes);
    ASSERT_TRUE(verified) << "at " << consumed << " + " << verified.error().offset;
    consumed += bytes.size();
    // A full area disables the event (TRUNCATED); bring it back once drained.
    ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  }
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
  EXPECT_GE(consumed, 64u * 1024);
  EXPECT_EQ(consumed % attr.config2, 0u);
}

}  // namespace
}  // namespace userperf
