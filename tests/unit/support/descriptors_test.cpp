// support/descriptors: userperf's descriptors moved high, registered with their identity, and told
// apart from a file the program opened at the same number after closing them behind our back.
#include "support/descriptors.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

namespace userperf::support {
namespace {

TEST(Descriptors, FloorIsHalfTheSoftLimitAtMost4096) {
  EXPECT_EQ(descriptor_floor_for(1024), 512);
  EXPECT_EQ(descriptor_floor_for(1 << 20), 4096);
  EXPECT_EQ(descriptor_floor_for(RLIM_INFINITY), 4096);
  EXPECT_EQ(descriptor_floor_for(32), 0) << "no room under so low a limit";
}

// One test: the floor is process-wide, set once.
TEST(Descriptors, PlacedHighRegisteredAndToldFromAnotherFileAtTheSameNumber) {
  // Without a floor nothing moves and nothing is registered (the library used directly).
  const int plain = place_descriptor(eventfd(0, EFD_CLOEXEC));
  ASSERT_GE(plain, 0);
  EXPECT_LT(plain, 64);
  EXPECT_FALSE(owns_descriptor(plain));
  close(plain);

  rlimit files{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
  const int floor = descriptor_floor_for(files.rlim_cur);
  ASSERT_GT(floor, 0);
  set_descriptor_floor(floor);
  const int low = eventfd(0, EFD_CLOEXEC);
  ASSERT_GE(low, 0);
  const int fd = place_descriptor(low);
  EXPECT_GE(fd, floor);
  EXPECT_EQ(fcntl(low, F_GETFD), -1) << "the low descriptor is closed";
  EXPECT_NE(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
  EXPECT_TRUE(owns_descriptor(fd));
  EXPECT_TRUE(still_ours(fd));
  EXPECT_EQ(next_owned_descriptor(0, ~0u), fd);
  EXPECT_EQ(next_owned_descriptor(static_cast<unsigned>(fd) + 1, ~0u), -1);

  // Closed behind our back, and another file opened at that number: registered, not ours.
  const int other = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(other, 0);
  close(fd);
  ASSERT_EQ(dup2(other, fd), fd);
  EXPECT_TRUE(owns_descriptor(fd));
  EXPECT_FALSE(still_ours(fd));
  close(fd);
  EXPECT_FALSE(still_ours(fd)) << "and not when nothing is open there";
  release_descriptor(fd);
  EXPECT_FALSE(owns_descriptor(fd));
  close(other);
  set_descriptor_floor(0);
}

}  // namespace
}  // namespace userperf::support
