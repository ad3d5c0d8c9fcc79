// attr.inherit: Engine::inherit_task clones a thread's inherit events for a thread it creates,
// Engine::exit_task folds the clones back (the kernel's perf_event_init_task /
// perf_event_exit_task). Driven with the test PMU, whose counts do not depend on the thread, and a
// made-up child tid.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cerrno>

#include "support/task_ids.hpp"
#include "support/test_events.hpp"

namespace userperf {
namespace {

using testing::field_at;
using testing::MappedRing;
using testing::record_type;
using testing::test_attr;

constexpr pid_t kChild = 0x3ffffff0;  // no thread has it: the test PMU counts whatever it is told

struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) testing::event_close(fd);
  }
  operator int() const { return fd; }
};

int open_test(perf_event_attr attr, int group = -1, int cpu = -1) {
  return testing::event_open(&attr, 0, cpu, group, 0);
}

std::uint64_t read_value(int fd) {
  std::uint64_t v = 0;
  EXPECT_EQ(testing::event_read(fd, &v, sizeof v), 8);
  return v;
}

// Counts into the first clone of `tid` (the only one in these tests but the group's).
std::uint64_t fire_clone(std::size_t index, std::uint64_t delta,
                         const core::SampleData& data = {}) {
  core::Engine& e = testing::engine();
  const auto clones = e.inherited_events(kChild);
  if (index >= clones.size()) return 0;
  return static_cast<testing::TestPmu*>(clones[index]->pmu)->count(e, *clones[index], delta, data);
}

struct ChildThread {
  ChildThread() { testing::engine().inherit_task(support::current_tid(), kChild); }
  ~ChildThread() { exit(); }
  void exit() {
    if (!exited) testing::engine().exit_task(kChild);
    exited = true;
  }
  bool exited = false;
};

TEST(Inherit, CountingEventIncludesLiveAndExitedClones) {
  perf_event_attr attr = test_attr(0, 0);
  attr.inherit = 1;
  Fd fd(open_test(attr));
  ASSERT_GE(fd, 0);
  testing::fire(fd, 3);
  ChildThread child;
  ASSERT_EQ(testing::engine().inherited_events(kChild).size(), 1u);
  fire_clone(0, 5);
  EXPECT_EQ(read_value(fd), 8u) << "a live clone's count is in the parent's";
  child.exit();
  EXPECT_TRUE(testing::engine().inherited_events(kChild).empty());
  EXPECT_EQ(read_value(fd), 8u) << "an exited clone's count is folded into the parent's";
  testing::fire(fd, 1);
  EXPECT_EQ(read_value(fd), 9u);
}

TEST(Inherit, WithoutInheritNothingIsCloned) {
  Fd fd(open_test(test_attr(0, 0)));
  ASSERT_GE(fd, 0);
  ChildThread child;
  EXPECT_TRUE(testing::engine().inherited_events(kChild).empty());
  EXPECT_EQ(fire_clone(0, 5), 0u);
  EXPECT_EQ(read_value(fd), 0u);
}

TEST(Inherit, TimesIncludeTheClones) {
  perf_event_attr attr = test_attr(0, 0);
  attr.inherit = 1;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  Fd fd(open_test(attr));
  ASSERT_GE(fd, 0);
  {
    ChildThread child;
    usleep(20000);
  }
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
  std::uint64_t v[3] = {};
  ASSERT_EQ(testing::event_read(fd, v, sizeof v), 24);
  // The parent's own time plus the clone's (20 ms at least, enabled and running alike).
  EXPECT_GE(v[1], 2 * 20'000'000u - 1'000'000u);
  EXPECT_GE(v[2], 2 * 20'000'000u - 1'000'000u);
  EXPECT_LE(v[2], v[1]);
}

TEST(Inherit, DisableAndEnableApplyToClones) {
  perf_event_attr attr = test_attr(0, 0);
  attr.inherit = 1;
  Fd fd(open_test(attr));
  ASSERT_GE(fd, 0);
  ChildThread child;
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
  fire_clone(0, 5);
  EXPECT_EQ(read_value(fd), 0u) << "a disabled parent's clone counts nothing";
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  fire_clone(0, 2);
  EXPECT_EQ(read_value(fd), 2u);
}

TEST(Inherit, DisabledParentGivesDisabledClone) {
  perf_event_attr attr = test_attr(0, 0);
  attr.inherit = 1;
  attr.disabled = 1;
  Fd fd(open_test(attr));
  ASSERT_GE(fd, 0);
  ChildThread child;
  fire_clone(0, 5);
  EXPECT_EQ(read_value(fd), 0u);
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  fire_clone(0, 4);
  EXPECT_EQ(read_value(fd), 4u) << "enabling the parent enables its clones";
}

TEST(Inherit, CloseTakesTheClones) {
  perf_event_attr attr = test_attr(0, 0);
  attr.inherit = 1;
  int fd = open_test(attr);
  ASSERT_GE(fd, 0);
  ChildThread child;
  ASSERT_EQ(testing::engine().inherited_events(kChild).size(), 1u);
  ASSERT_EQ(testing::event_close(fd), 0);
  EXPECT_TRUE(testing::engine().inherited_events(kChild).empty());
}

TEST(Inherit, GroupIsClonedWithItsLeader) {
  perf_event_attr attr = test_attr(0, 0);
  attr.inherit = 1;
  attr.read_format = PERF_FORMAT_GROUP;
  Fd leader(open_test(attr));
  ASSERT_GE(leader, 0);
  Fd sibling(open_test(attr, leader));
  ASSERT_GE(sibling, 0);
  ChildThread child;
  const auto clones = testing::engine().inherited_events(kChild);
  ASSERT_EQ(clones.size(), 2u);
  EXPECT_TRUE(clones[0]->is_leader());
  EXPECT_EQ(clones[1]->leader.load(), clones[0]);
  fire_clone(0, 2);
  fire_clone(1, 7);
  testing::fire(sibling, 1);
  std::uint64_t v[3] = {};
  ASSERT_EQ(testing::event_read(leader, v, sizeof v), 24);
  EXPECT_EQ(v[0], 2u);
  EXPECT_EQ(v[1], 2u);
  EXPECT_EQ(v[2], 8u);
  child.exit();
  ASSERT_EQ(testing::event_read(leader, v, sizeof v), 24);
  EXPECT_EQ(v[1], 2u);
  EXPECT_EQ(v[2], 8u);
}

TEST(Inherit, GrandchildrenLinkToTheOriginal) {
  perf_event_attr attr = test_attr(0, 0);
  attr.inherit = 1;
  Fd fd(open_test(attr));
  ASSERT_GE(fd, 0);
  ChildThread child;
  core::Engine& e = testing::engine();
  e.inherit_task(kChild, kChild + 1);
  const auto grandchildren = e.inherited_events(kChild + 1);
  ASSERT_EQ(grandchildren.size(), 1u);
  EXPECT_EQ(grandchildren[0]->parent, e.event(fd));
  static_cast<testing::TestPmu*>(grandchildren[0]->pmu)->count(e, *grandchildren[0], 6, {});
  e.exit_task(kChild + 1);
  EXPECT_EQ(read_value(fd), 6u);
}

// The kernel refuses mmap of an inherited per-task event on every CPU; one on a CPU maps, and its
// clones' samples land in its ring under its id (STREAM_ID: the clone's own).
TEST(Inherit, CloneSamplesGoToTheParentRing) {
  perf_event_attr attr = test_attr(PERF_SAMPLE_TID | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID, 1);
  attr.inherit = 1;
  Fd fd(open_test(attr, -1, 0));
  ASSERT_GE(fd, 0);
  MappedRing ring(fd, 2);
  ASSERT_TRUE(ring.ok());
  ChildThread child;
  core::SampleData data;
  data.pid = 1;
  data.tid = static_cast<std::uint32_t>(kChild);
  EXPECT_EQ(fire_clone(0, 1, data), 1u);
  const std::uint64_t clone_id = testing::engine().inherited_events(kChild)[0]->id;
  std::uint64_t parent_id = 0;
  ASSERT_EQ(
      testing::event_ioctl(fd, PERF_EVENT_IOC_ID, reinterpret_cast<unsigned long>(&parent_id)), 0);
  const auto records = ring.drain();
  ASSERT_EQ(records.size(), 1u);
  ASSERT_EQ(record_type(records[0]), PERF_RECORD_SAMPLE);
  EXPECT_EQ(field_at<std::uint32_t>(records[0], 12), static_cast<std::uint32_t>(kChild));
  EXPECT_EQ(field_at<std::uint64_t>(records[0], 16), parent_id);
  EXPECT_EQ(field_at<std::uint64_t>(records[0], 24), clone_id);
  EXPECT_NE(clone_id, parent_id);
}

// sync_child_event writes PERF_RECORD_READ under inherit_stat only while the exiting task's context
// still names it, which it no longer does (TASK_TOMBSTONE): the kernel writes none, nor does
// userperf (tests/conformance/inherit_test.cpp compares).
// sync_child_event: the clone's own values in a PERF_RECORD_READ at its thread's exit, before its
// count joins the original's; none without inherit_stat.
TEST(Inherit, ReadRecordAtExitWithInheritStat) {
  for (const bool stat : {true, false}) {
    perf_event_attr attr = test_attr(0, 0);
    attr.inherit = 1;
    attr.inherit_stat = stat ? 1 : 0;
    attr.read_format = PERF_FORMAT_ID;
    Fd fd(open_test(attr, -1, 0));
    ASSERT_GE(fd, 0);
    MappedRing ring(fd, 2);
    ASSERT_TRUE(ring.ok());
    testing::fire(fd, 4);
    ChildThread child;
    fire_clone(0, 11);
    child.exit();
    const auto records = ring.drain();
    if (!stat) {
      EXPECT_TRUE(records.empty());
      continue;
    }
    ASSERT_EQ(records.size(), 1u);
    const auto& rec = records[0];
    EXPECT_EQ(record_type(rec), PERF_RECORD_READ);
    ASSERT_EQ(rec.size(), 8u + 8u + 16u);
    EXPECT_EQ(field_at<std::uint32_t>(rec, 8), static_cast<std::uint32_t>(getpid()));
    EXPECT_EQ(field_at<std::uint32_t>(rec, 12), static_cast<std::uint32_t>(kChild));
    EXPECT_EQ(field_at<std::uint64_t>(rec, 16), 11u) << "the clone's own count, not the sum";
    std::uint64_t id = 0;
    ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ID, reinterpret_cast<unsigned long>(&id)), 0);
    EXPECT_EQ(field_at<std::uint64_t>(rec, 24), id);
    std::uint64_t words[2] = {};
    ASSERT_EQ(testing::event_read(fd, words, sizeof words), 16);
    EXPECT_EQ(words[0], 15u);
  }
}

}  // namespace
}  // namespace userperf
