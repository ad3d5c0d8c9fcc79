// Ring memfds are passed to other processes (the recorder maps every thread's ring): their size is
// sealed, so that nobody can shrink them under a consumer's mapping.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include "ring/aux_ring.hpp"
#include "ring/ring_memory.hpp"

namespace userperf::ring {
namespace {

TEST(RingMemory, SizeIsSealed) {
  RingMemory memory;
  ASSERT_EQ(memory.create(4, "test-ring"), 0);
  EXPECT_TRUE(ring_memfd_size_sealed(memory.fd()));
  EXPECT_NE(ftruncate(memory.fd(), static_cast<off_t>(page_size())), 0);
  EXPECT_EQ(errno, EPERM);
  EXPECT_NE(ftruncate(memory.fd(), static_cast<off_t>(64 * page_size())), 0);
}

TEST(RingMemory, AnUnsealedMemfdIsReportedAsSuch) {
  const int fd = memfd_create("plain", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(2 * page_size())), 0);
  EXPECT_FALSE(ring_memfd_size_sealed(fd));
  close(fd);
  EXPECT_FALSE(ring_memfd_size_sealed(-1));
}

}  // namespace
}  // namespace userperf::ring
