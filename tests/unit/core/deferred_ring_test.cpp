// Engine::defer_ring and materialize_ring: a ring whose memory is made later (the recorder's agent
// makes it at a thread's first sample). Until then records are dropped and there is no memfd;
// after, the owner and the events SET_OUTPUT to it write there; the ring goes with its owner.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "core/engine.hpp"
#include "ring/reader.hpp"
#include "support/test_events.hpp"

namespace userperf {
namespace {

using testing::test_attr;

constexpr std::size_t kPages = 4;

// The ring behind a memfd the way a consumer in another process maps it.
struct MemfdRing {
  void* base = MAP_FAILED;
  std::size_t length = 0;
  ring::RingView view;

  explicit MemfdRing(int memfd) {
    struct stat st {};
    if (fstat(memfd, &st) != 0) return;
    length = static_cast<std::size_t>(st.st_size);
    base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    if (base != MAP_FAILED) ring::make_ring_view(base, length, view);
  }
  ~MemfdRing() {
    if (base != MAP_FAILED) munmap(base, length);
  }
  std::size_t samples() {
    std::size_t n = 0;
    ring::Reader reader(view);
    if (reader.begin() != ring::ReadStatus::kOk) return 0;
    ring::Record r;
    while (reader.next(r) == ring::ReadStatus::kOk) n += r.header.type == PERF_RECORD_SAMPLE;
    return n;
  }
};

TEST(DeferredRing, RecordsWaitForItsMemoryThenLandInIt) {
  core::Engine& engine = testing::engine();
  perf_event_attr attr = test_attr(PERF_SAMPLE_IP);
  const int owner = testing::event_open(&attr, 0, -1, -1, 0);
  const int member = testing::event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(owner, 0);
  ASSERT_GE(member, 0);
  ASSERT_EQ(engine.defer_ring(owner, kPages), 0);
  EXPECT_EQ(engine.defer_ring(owner, kPages), -EBUSY) << "a second ring for one event";
  ASSERT_EQ(
      testing::event_ioctl(member, PERF_EVENT_IOC_SET_OUTPUT, static_cast<unsigned long>(owner)),
      0);
  EXPECT_LT(testing::event_ring_fd(owner), 0) << "no memfd before its memory is made";
  EXPECT_EQ(testing::fire(owner, 3), 3u);  // counted, written nowhere
  EXPECT_EQ(testing::fire(member, 2), 2u);

  const int memfd = core::Engine::materialize_ring(*engine.event(owner));
  ASSERT_GE(memfd, 0) << strerror(-memfd);
  EXPECT_EQ(core::Engine::materialize_ring(*engine.event(owner)), memfd) << "made once";
  EXPECT_EQ(testing::event_ring_fd(owner), memfd);
  MemfdRing ring(memfd);
  ASSERT_NE(ring.base, MAP_FAILED);
  EXPECT_EQ(ring.length, (1 + kPages) * 4096u);
  EXPECT_EQ(ring.samples(), 0u) << "what was dropped stays dropped";
  EXPECT_EQ(testing::fire(owner, 3), 3u);
  EXPECT_EQ(testing::fire(member, 2), 2u);
  EXPECT_EQ(ring.samples(), 5u) << "the owner's and the redirected event's";
  EXPECT_EQ(testing::event_close(member), 0);
  EXPECT_EQ(testing::event_close(owner), 0);
}

core::Event* g_event = nullptr;
int g_memfd = -1;

void materialize_in_handler(int) {
  g_memfd = core::Engine::materialize_ring(*g_event);
}

// What the agent does: the memory is made from a signal handler.
TEST(DeferredRing, MemoryIsMadeFromASignalHandler) {
  core::Engine& engine = testing::engine();
  perf_event_attr attr = test_attr(PERF_SAMPLE_IP);
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(engine.defer_ring(fd, kPages), 0);
  g_event = engine.event(fd);
  struct sigaction sa {};
  struct sigaction saved {};
  sa.sa_handler = materialize_in_handler;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &saved), 0);
  raise(SIGUSR1);
  sigaction(SIGUSR1, &saved, nullptr);
  ASSERT_GE(g_memfd, 0) << strerror(-g_memfd);
  MemfdRing ring(g_memfd);
  EXPECT_EQ(testing::fire(fd, 4), 4u);
  EXPECT_EQ(ring.samples(), 4u);
  EXPECT_EQ(testing::event_close(fd), 0);
}

// An event that never made its ring's memory leaves nothing behind when it closes: the ring goes
// with it, and a new event can have one again.
TEST(DeferredRing, GoesWithItsOwner) {
  core::Engine& engine = testing::engine();
  perf_event_attr attr = test_attr(PERF_SAMPLE_IP);
  for (int round = 0; round < 3; ++round) {
    const int fd = testing::event_open(&attr, 0, -1, -1, 0);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(engine.defer_ring(fd, kPages), 0);
    if (round == 1) {
      ASSERT_GE(core::Engine::materialize_ring(*engine.event(fd)), 0);
    }
    EXPECT_EQ(testing::event_close(fd), 0);
  }
  EXPECT_EQ(engine.defer_ring(12345, kPages), -EBADF);
}

}  // namespace
}  // namespace userperf
