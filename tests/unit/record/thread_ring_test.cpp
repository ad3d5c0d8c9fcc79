// The recorder maps only ring memfds whose size is sealed: the recorded program holds the memfd
// too, and shrinking an unsealed one under the mapping would kill the recorder with SIGBUS. (The
// sealed case: every recorder_session_test ring comes from the engine, sealed.)
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include "record/recorder/thread_ring.hpp"
#include "ring/ring_memory.hpp"

namespace userperf::record {
namespace {

TEST(ThreadRing, RefusesAMemfdWhoseSizeIsNotSealed) {
  const int fd = memfd_create("unsealed-ring", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(3 * ring::page_size())), 0);
  std::string error;
  EXPECT_EQ(ThreadRing::map(fd, 1, 1, error), nullptr);
  EXPECT_NE(error.find("sealed"), std::string::npos) << error;
  close(fd);
}

}  // namespace
}  // namespace userperf::record
