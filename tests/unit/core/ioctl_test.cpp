// ioctl, read and group semantics of the engine, driven through the C API with the test PMU.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cerrno>

#include "support/expected.hpp"
#include "support/test_events.hpp"

namespace userperf {
namespace {

using testing::fire;
using testing::MappedRing;
using testing::test_attr;

struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) testing::event_close(fd);
  }
  operator int() const { return fd; }
};

int open_test(perf_event_attr attr, int group = -1, unsigned long flags = 0, int cpu = -1) {
  return testing::event_open(&attr, 0, cpu, group, flags);
}

std::uint64_t read_value(int fd) {
  std::uint64_t v = 0;
  EXPECT_EQ(testing::event_read(fd, &v, sizeof v), 8);
  return v;
}

TEST(Ioctl, EnableDisableReset) {
  perf_event_attr attr = test_attr(PERF_SAMPLE_IP, 0);  // counting only
  attr.disabled = 1;
  Fd fd(open_test(attr));
  ASSERT_GE(fd, 0);
  fire(fd, 5);
  EXPECT_EQ(read_value(fd), 0u) << "a disabled event counts nothing";
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  fire(fd, 5);
  EXPECT_EQ(read_value(fd), 5u);
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
  fire(fd, 5);
  EXPECT_EQ(read_value(fd), 5u);
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_RESET, 0), 0);
  EXPECT_EQ(read_value(fd), 0u);
  EXPECT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ENABLE, 2), -1);
  EXPECT_EQ(errno, EINVAL);
}

TEST(Ioctl, BadDescriptorsAndRequests) {
  EXPECT_EQ(testing::event_ioctl(0, PERF_EVENT_IOC_ENABLE, 0), -1);
  EXPECT_EQ(errno, EBADF);
  Fd fd(open_test(test_attr(0, 0)));
  EXPECT_EQ(testing::event_ioctl(fd, 0x1234, 0), -1);
  EXPECT_EQ(errno, ENOTTY);
  EXPECT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_SET_BPF, 3), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(testing::event_close(12345), -1);
  EXPECT_EQ(errno, EBADF);
}

TEST(Ioctl, IdAndPeriod) {
  Fd fd(open_test(test_attr(PERF_SAMPLE_PERIOD, 10)));
  std::uint64_t id = 0;
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ID, reinterpret_cast<unsigned long>(&id)), 0);
  EXPECT_EQ(id, testing::engine().event(fd)->id);
  EXPECT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ID, 8), -1)
      << "a bad pointer is EFAULT, not a crash";
  EXPECT_EQ(errno, EFAULT);

  std::uint64_t period = 0;
  EXPECT_EQ(
      testing::event_ioctl(fd, PERF_EVENT_IOC_PERIOD, reinterpret_cast<unsigned long>(&period)),
      -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_PERIOD, 16), -1);
  EXPECT_EQ(errno, EFAULT);
  period = 4;
  ASSERT_EQ(
      testing::event_ioctl(fd, PERF_EVENT_IOC_PERIOD, reinterpret_cast<unsigned long>(&period)), 0);
  MappedRing ring(fd, 1);
  EXPECT_EQ(fire(fd, 12), 3u);
  const auto records = ring.drain();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(testing::field_at<std::uint64_t>(records[0], 8), 4u);
}

// PERIOD changes the live period or frequency (what the overflow path reads), never the attr the
// event was opened with: a signal handler may be reading it.
TEST(Ioctl, PeriodChangesTheLiveValuesNotTheAttr) {
  Fd fd(open_test(test_attr(PERF_SAMPLE_PERIOD, 10)));
  const core::Event& event = *testing::engine().event(fd);
  std::uint64_t period = 4;
  ASSERT_EQ(
      testing::event_ioctl(fd, PERF_EVENT_IOC_PERIOD, reinterpret_cast<unsigned long>(&period)), 0);
  EXPECT_EQ(event.sample_period.load(), 4u);
  EXPECT_EQ(event.attr.sample_period, 10u);

  perf_event_attr attr = test_attr(PERF_SAMPLE_PERIOD);
  attr.freq = 1;
  attr.sample_freq = 1000;
  Fd freq_fd(open_test(attr));
  const core::Event& freq_event = *testing::engine().event(freq_fd);
  EXPECT_EQ(freq_event.sample_freq.load(), 1000u);
  std::uint64_t freq = 2000;
  ASSERT_EQ(
      testing::event_ioctl(freq_fd, PERF_EVENT_IOC_PERIOD, reinterpret_cast<unsigned long>(&freq)),
      0);
  EXPECT_EQ(freq_event.sample_freq.load(), 2000u);
  EXPECT_EQ(freq_event.attr.sample_freq, 1000u);
  EXPECT_EQ(freq_event.sample_period.load(), 1u) << "the adaptation starts from where it was";
  freq = testing::engine().limits().max_sample_rate + 1ULL;
  EXPECT_EQ(
      testing::event_ioctl(freq_fd, PERF_EVENT_IOC_PERIOD, reinterpret_cast<unsigned long>(&freq)),
      -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(freq_event.sample_freq.load(), 2000u);
}

TEST(Ioctl, RefreshLimitsOverflowsThenDisables) {
  perf_event_attr attr = test_attr(PERF_SAMPLE_IP, 1);
  attr.disabled = 1;
  Fd fd(open_test(attr));
  MappedRing ring(fd, 1);
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_REFRESH, 3), 0);
  fire(fd, 10);
  EXPECT_EQ(ring.drain().size(), 3u);
  EXPECT_EQ(testing::engine().event(fd)->state.load(), core::EventState::kOff);
  EXPECT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_REFRESH, 0), -1);
  EXPECT_EQ(errno, EINVAL);
}

TEST(Read, FormatsAndShortBuffers) {
  perf_event_attr attr = test_attr(0, 0);
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
                     PERF_FORMAT_ID | PERF_FORMAT_LOST;
  Fd fd(open_test(attr));
  fire(fd, 7);
  std::uint64_t v[5] = {};
  EXPECT_EQ(testing::event_read(fd, v, 39), -1);
  EXPECT_EQ(errno, ENOSPC);
  ASSERT_EQ(testing::event_read(fd, v, sizeof v), 40);
  EXPECT_EQ(v[0], 7u);
  EXPECT_GT(v[1], 0u);
  EXPECT_GE(v[1], v[2]);
  EXPECT_EQ(v[3], testing::engine().event(fd)->id);
  EXPECT_EQ(v[4], 0u);
  EXPECT_EQ(testing::event_read(fd, reinterpret_cast<void*>(8), sizeof v), -1);
  EXPECT_EQ(errno, EFAULT);
}

TEST(Group, ReadEnableAndClose) {
  perf_event_attr leader_attr = test_attr(0, 0);
  leader_attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
  leader_attr.disabled = 1;
  Fd leader(open_test(leader_attr));
  perf_event_attr sibling_attr = leader_attr;
  sibling_attr.disabled = 0;
  const int sibling = open_test(sibling_attr, leader);
  ASSERT_GE(sibling, 0);
  fire(sibling, 3);
  std::uint64_t v[5] = {};
  ASSERT_EQ(testing::event_read(leader, v, sizeof v), 40);
  EXPECT_EQ(v[0], 2u);
  EXPECT_EQ(v[3], 0u) << "a sibling of a disabled leader does not run";  // {value, id} pairs
  ASSERT_EQ(testing::event_ioctl(leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
  fire(sibling, 3);
  fire(leader, 2);
  ASSERT_EQ(testing::event_read(sibling, v, sizeof v),
            40);  // a member's group read reads the group
  EXPECT_EQ(v[1], 2u);
  EXPECT_EQ(v[3], 3u);
  // A sibling cannot lead a group.
  EXPECT_EQ(open_test(sibling_attr, sibling), -1);
  EXPECT_EQ(errno, EINVAL);
  ASSERT_EQ(testing::event_close(sibling), 0);
  ASSERT_EQ(testing::event_read(leader, v, sizeof v), 24);
  EXPECT_EQ(v[0], 1u);
}

TEST(Mmap, KernelSizeAndModeRules) {
  Fd fd(open_test(test_attr(PERF_SAMPLE_IP)));
  const long page = sysconf(_SC_PAGESIZE);
  EXPECT_EQ(testing::event_mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0),
            MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(testing::event_mmap(nullptr, 5 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0),
            MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(testing::event_mmap(nullptr, 5 * page, PROT_READ, MAP_SHARED, 999, 0), MAP_FAILED);
  EXPECT_EQ(errno, EBADF);
  void* a = testing::event_mmap(nullptr, 5 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(a, MAP_FAILED);
  void* b = testing::event_mmap(nullptr, 5 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(b, MAP_FAILED);
  static_cast<perf_event_mmap_page*>(a)->data_tail = 64;
  EXPECT_EQ(static_cast<perf_event_mmap_page*>(b)->data_tail, 64u) << "mappings share the page";
  EXPECT_EQ(testing::event_mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0),
            MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(testing::event_munmap(static_cast<char*>(a) + page, page), -1) << "no partial unmap";
  EXPECT_EQ(errno, EINVAL);
  // AUX geometry checks, then EOPNOTSUPP: no PMU here has an AUX area.
  EXPECT_EQ(testing::event_mmap(nullptr, 4 * page, PROT_READ, MAP_SHARED, fd, 5 * page),
            MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);
  auto* ctl = static_cast<perf_event_mmap_page*>(a);
  ctl->aux_offset = 5 * page;
  ctl->aux_size = 4 * page;
  EXPECT_EQ(testing::event_mmap(nullptr, 4 * page, PROT_READ, MAP_SHARED, fd, 5 * page),
            MAP_FAILED);
  EXPECT_EQ(errno, EOPNOTSUPP);
  EXPECT_EQ(testing::event_munmap(a, 5 * page), 0);
  EXPECT_EQ(testing::event_munmap(b, 5 * page), 0);
}

// Engine::mmap answers as the kernel's mmap path: the mapping or err_ptr(-errno), never a null
// pointer or a positive errno (event_mmap above turns it into MAP_FAILED and errno).
TEST(Mmap, EngineReturnsTheMappingOrAnErrorPointer) {
  Fd fd(open_test(test_attr(PERF_SAMPLE_IP)));
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  core::Engine& engine = testing::engine();
  void* bad_fd = engine.mmap(nullptr, 5 * page, PROT_READ, MAP_SHARED, 999, 0);
  ASSERT_TRUE(is_err(bad_fd));
  EXPECT_EQ(ptr_err(bad_fd), -EBADF);
  void* bad_size = engine.mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_TRUE(is_err(bad_size));
  EXPECT_EQ(ptr_err(bad_size), -EINVAL);
  void* no_aux = engine.mmap(nullptr, 4 * page, PROT_READ, MAP_SHARED, fd, 5 * page);
  ASSERT_TRUE(is_err(no_aux)) << "no data ring yet";
  EXPECT_EQ(ptr_err(no_aux), -EINVAL);
  void* ring = engine.mmap(nullptr, 5 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_FALSE(is_err(ring));
  ASSERT_NE(ring, nullptr);
  EXPECT_EQ(engine.munmap(ring, 5 * page), 0);
}

TEST(Mmap, InheritedPerTaskEventCannotMap) {
  perf_event_attr attr = test_attr(PERF_SAMPLE_IP | PERF_SAMPLE_TID);
  attr.inherit = 1;
  Fd fd(open_test(attr));
  ASSERT_GE(fd, 0);
  EXPECT_EQ(testing::event_mmap(nullptr, 2 * sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
                                MAP_SHARED, fd, 0),
            MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);
}

TEST(Poll, WakeupsAreReportedOnceAndHupWithoutBuffer) {
  perf_event_attr attr = test_attr(PERF_SAMPLE_IP);
  attr.wakeup_events = 2;
  Fd fd(open_test(attr));
  pollfd p{fd, POLLIN, 0};
  ASSERT_EQ(testing::event_poll(&p, 1, 0), 1);
  EXPECT_EQ(p.revents, POLLHUP) << "no buffer: POLLHUP at once";
  MappedRing ring(fd, 1);
  fire(fd, 1);
  EXPECT_EQ(testing::event_poll(&p, 1, 0), 0);
  fire(fd, 1);
  ASSERT_EQ(testing::event_poll(&p, 1, 100), 1);
  EXPECT_TRUE(p.revents & POLLIN);
  EXPECT_EQ(testing::event_poll(&p, 1, 0), 0) << "reported once per wakeup";
  testing::engine().exit(getpid(), getppid(), gettid(), gettid());
  ASSERT_EQ(testing::event_poll(&p, 1, 0), 1);
  EXPECT_EQ(p.revents, POLLHUP);
}

}  // namespace
}  // namespace userperf
