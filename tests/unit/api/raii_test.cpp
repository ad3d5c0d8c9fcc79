// The C++ layer of include/userperf/userperf.hpp: ownership, errors as std::system_error with the
// kernel's errno, and that it reaches the same engine as the C API.
#include <gtest/gtest.h>

#include <system_error>

#include "support/test_events.hpp"
#include "userperf/userperf.hpp"

namespace userperf {
namespace {

int error_of(auto&& action) {
  try {
    action();
  } catch (const std::system_error& e) {
    return e.code().value();
  }
  return 0;
}

TEST(Raii, OpenErrorsCarryTheKernelsErrno) {
  perf_event_attr attr = testing::test_attr(PERF_SAMPLE_IP);
  attr.size = 1;  // below PERF_ATTR_SIZE_VER0
  EXPECT_EQ(error_of([&] { Event e(attr); }), E2BIG);
  attr = testing::test_attr(PERF_SAMPLE_IP);
  attr.sample_type = 1ull << 63;  // no such bit
  EXPECT_EQ(error_of([&] { Event e(attr); }), EINVAL);
}

TEST(Raii, EventClosesItsHandle) {
  int fd = -1;
  {
    Event event(testing::test_attr(PERF_SAMPLE_IP), -1, 0);
    fd = event.fd();
    Event moved(std::move(event));
    EXPECT_EQ(moved.fd(), fd);
    EXPECT_EQ(event.fd(), -1);
  }
  EXPECT_EQ(userperf_close(fd), -1);
  EXPECT_EQ(errno, EBADF);
}

TEST(Raii, MappingAndSamplesThroughTheCppLayer) {
  perf_event_attr attr = testing::test_attr(PERF_SAMPLE_IP | PERF_SAMPLE_ID);
  Event leader(attr, -1, 0);
  Event other(attr, -1, 0);
  EXPECT_EQ(error_of([&] { Mapping bad(leader, 3); }), EINVAL);  // not a power of two
  Mapping mapping(leader, 4);
  EXPECT_EQ(mapping.data().size(), 4 * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
  other.set_output(leader);
  // As the kernel: an event whose output goes to another buffer cannot be mapped itself.
  EXPECT_EQ(error_of([&] { Mapping redirected(other, 4); }), EBUSY);

  core::SampleData data;
  data.ip = 0x1234;
  testing::fire(other.fd(), 1, data);
  const std::uint64_t head = mapping.control()->data_head;
  ASSERT_EQ(head, 24u);
  std::uint64_t ip = 0, id = 0;
  std::memcpy(&ip, mapping.data().data() + 8, 8);
  std::memcpy(&id, mapping.data().data() + 16, 8);
  EXPECT_EQ(ip, 0x1234u);
  EXPECT_EQ(id, other.id());

  std::uint64_t value[1];
  EXPECT_EQ(other.read(value), 8u);
}

}  // namespace
}  // namespace userperf
