// Output redirection, kernel vs userperf (kernel-perf-spec §1.8, §9 checks 18–21; kernel-oracle.md
// §5): PERF_EVENT_IOC_SET_OUTPUT and PERF_FLAG_FD_OUTPUT, their errno table, mmap of a redirected
// event, group membership, and samples of several events sharing one ring.
#include <fcntl.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "conformance/kernel_support.hpp"
#include "support/engine_under_test.hpp"
#include "userperf/userperf.h"

namespace userperf::conformance {
namespace {

constexpr unsigned long kIntMinusOne = 0xffffffffUL;  // an int -1 through the ioctl varargs
constexpr unsigned long kLongMinusOne = ~0UL;

perf_event_attr sampling_attr() {
  return clock_attr(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
}

// CPU-wide (pid=-1) events: cpu-clock on the kernel. userperf's clocks sample threads on their own
// CPU-time timers and refuse pid=-1 by design (src/pmu/clock/software_pmu.cpp), so its half uses
// the test PMU, which takes any pid/cpu; the redirection rules do not depend on the PMU.
perf_event_attr cpu_wide_attr(Target target) {
  perf_event_attr attr = sampling_attr();
  if (target == Target::kUserperf)
    attr.type = static_cast<std::uint32_t>(userperf::testing::test_pmu_type());
  return attr;
}

// A thread of this process that only waits, so events can name another task.
class IdleThread {
 public:
  IdleThread() {
    thread_ = std::thread([this] {
      std::unique_lock lock(mutex_);
      tid_ = this_tid();
      cv_.notify_all();
      cv_.wait(lock, [this] { return stop_; });
    });
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return tid_ != 0; });
  }
  ~IdleThread() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  pid_t tid() const { return tid_; }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  pid_t tid_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

class Redirect : public TargetTest {
 protected:
  int set_output(const Event& e, unsigned long target) {
    return e.ioctl(PERF_EVENT_IOC_SET_OUTPUT, target);
  }
  int set_output(const Event& e, const Event& target) {
    return set_output(e, static_cast<unsigned long>(target.fd()));
  }
  // mmap of `data_pages` (+1) pages of e: 0 or the errno.
  int try_map(const Event& e, std::size_t data_pages) {
    Ring r(perf(), e.fd(), data_pages);
    return r.error();
  }
};

TEST_P(Redirect, SetOutputErrnos) {
  Event a(perf(), sampling_attr());
  Event b(perf(), sampling_attr());
  Event unmapped(perf(), sampling_attr());
  ASSERT_TRUE(a.ok() && b.ok() && unmapped.ok());
  Ring ring(perf(), a.fd(), 1);
  ASSERT_TRUE(ring.ok());

  EXPECT_EQ(set_output(b, unmapped), -EINVAL) << "target without a buffer";
  EXPECT_EQ(set_output(b, b), -EINVAL) << "to itself";
  int pipe_fds[2];
  ASSERT_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
  EXPECT_EQ(set_output(b, static_cast<unsigned long>(pipe_fds[0])), -EBADF) << "not a perf fd";
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  EXPECT_EQ(set_output(b, kIntMinusOne), -EBADF) << "(int)-1 is fd 0xffffffff";
  EXPECT_EQ(set_output(b, kLongMinusOne), 0) << "(long)-1 detaches";

  // Mixing clocks: even MONOTONIC against the default clock.
  perf_event_attr mono = sampling_attr();
  mono.use_clockid = 1;
  mono.clockid = CLOCK_MONOTONIC;
  Event mono_mapped(perf(), mono);
  Event mono_free(perf(), mono);
  ASSERT_TRUE(mono_mapped.ok() && mono_free.ok()) << strerror(mono_mapped.error());
  Ring mono_ring(perf(), mono_mapped.fd(), 1);
  ASSERT_TRUE(mono_ring.ok());
  EXPECT_EQ(set_output(b, mono_mapped), -EINVAL) << "default clock into a MONOTONIC ring";
  EXPECT_EQ(set_output(mono_free, a), -EINVAL) << "MONOTONIC into a default-clock ring";

  // Forward and backward writers never share a ring.
  perf_event_attr back = sampling_attr();
  back.write_backward = 1;
  Event back_mapped(perf(), back);
  Event back_free(perf(), back);
  ASSERT_TRUE(back_mapped.ok() && back_free.ok());
  Ring back_ring(perf(), back_mapped.fd(), 1, PROT_READ);
  ASSERT_TRUE(back_ring.ok());
  EXPECT_EQ(set_output(b, back_mapped), -EINVAL) << "forward into backward";
  EXPECT_EQ(set_output(back_free, a), -EINVAL) << "backward into forward";

  // An event with its own mapping cannot be redirected, even into a valid ring.
  Event own(perf(), sampling_attr());
  ASSERT_TRUE(own.ok());
  Ring own_ring(perf(), own.fd(), 1);
  ASSERT_TRUE(own_ring.ok());
  EXPECT_EQ(set_output(own, a), -EINVAL) << "redirecting a mapped event";
  EXPECT_EQ(set_output(a, kLongMinusOne), -EINVAL) << "detaching a mapped event";
}

// Per-task rings (cpu=-1) take only events of the same task.
TEST_P(Redirect, OtherTaskIntoPerTaskRing) {
  IdleThread other;
  Event a(perf(), sampling_attr());
  Event foreign(perf(), sampling_attr(), other.tid(), -1);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(foreign.ok()) << strerror(foreign.error());
  Ring ring(perf(), a.fd(), 1);
  ASSERT_TRUE(ring.ok());
  EXPECT_EQ(set_output(foreign, a), -EINVAL);
}

// CPU-wide rings: same CPU only; per-task cpu=-1 events and CPU-wide events do not mix, but a
// per-task event bound to the same CPU may join.
TEST_P(Redirect, CpuWideRules) {
  const perf_event_attr wide = cpu_wide_attr(target());
  Event x(perf(), wide, -1, 0);
  ASSERT_TRUE(x.ok()) << strerror(x.error());
  Ring x_ring(perf(), x.fd(), 1);
  ASSERT_TRUE(x_ring.ok());
  Event task(perf(), sampling_attr());
  ASSERT_TRUE(task.ok());
  EXPECT_EQ(set_output(task, x), -EINVAL) << "per-task cpu=-1 into a CPU-wide ring";

  Event task_ring_owner(perf(), sampling_attr());
  Ring task_ring(perf(), task_ring_owner.fd(), 1);
  ASSERT_TRUE(task_ring.ok());
  Event x_free(perf(), wide, -1, 0);
  ASSERT_TRUE(x_free.ok());
  EXPECT_EQ(set_output(x_free, task_ring_owner), -EINVAL) << "cpu=0 into a cpu=-1 ring";

  if (sysconf(_SC_NPROCESSORS_ONLN) > 1) {
    Event y(perf(), wide, -1, 1);
    ASSERT_TRUE(y.ok()) << strerror(y.error());
    EXPECT_EQ(set_output(y, x), -EINVAL) << "cpu=1 into a cpu=0 ring";
  }

  Event pinned_task(perf(), wide, 0, 0);
  ASSERT_TRUE(pinned_task.ok()) << strerror(pinned_task.error());
  EXPECT_EQ(set_output(pinned_task, x), 0) << "pid=self,cpu=0 into a pid=-1,cpu=0 ring";
}

// After SET_OUTPUT the event writes into the target's buffer and may not map one of its own:
// EBUSY for the same size, EINVAL for another. Detaching with (long)-1 frees it again.
TEST_P(Redirect, MmapOfARedirectedEvent) {
  Event a(perf(), sampling_attr());
  Event b(perf(), sampling_attr());
  ASSERT_TRUE(a.ok() && b.ok());
  Ring ring(perf(), a.fd(), 1);
  ASSERT_TRUE(ring.ok());
  ASSERT_EQ(set_output(b, a), 0);
  EXPECT_EQ(set_output(b, a), 0) << "repeating is harmless";
  EXPECT_EQ(try_map(b, 1), EBUSY);
  EXPECT_EQ(try_map(b, 2), EINVAL);
  EXPECT_EQ(try_map(b, 0), EINVAL);

  ASSERT_EQ(b.enable(), 0);
  EXPECT_TRUE(burn_until([&] { return ring.head() != 0; }, 2000));
  ASSERT_EQ(b.disable(), 0);
  const std::vector<Rec> records = ring.drain();
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.front().at<std::uint64_t>(8), b.id()) << "IDENTIFIER of the redirected event";

  ASSERT_EQ(set_output(b, kLongMinusOne), 0);
  EXPECT_EQ(try_map(b, 2), 0);
}

// Samples of the owner, a SET_OUTPUT event and an FD_OUTPUT|FD_NO_GROUP event interleave in one
// ring and are told apart by IDENTIFIER.
TEST_P(Redirect, SamplesOfSeveralEventsShareOneRing) {
  Event a(perf(), sampling_attr());
  ASSERT_TRUE(a.ok());
  Ring ring(perf(), a.fd(), 16);
  ASSERT_TRUE(ring.ok());
  Event b(perf(), sampling_attr());
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(set_output(b, a), 0);
  Event g(perf(), sampling_attr(), 0, -1, a.fd(), PERF_FLAG_FD_OUTPUT | PERF_FLAG_FD_NO_GROUP);
  ASSERT_TRUE(g.ok()) << strerror(g.error());

  const std::set<std::uint64_t> ids = {a.id(), b.id(), g.id()};
  ASSERT_EQ(ids.size(), 3u);
  std::map<std::uint64_t, int> seen;
  std::vector<Rec> records;
  for (const Event* e : {&a, &b, &g}) ASSERT_EQ(e->enable(), 0);
  burn_until(
      [&] {
        for (Rec& r : ring.drain()) {
          seen[r.at<std::uint64_t>(8)]++;
          records.push_back(std::move(r));
        }
        return seen.size() >= 3 && seen[a.id()] >= 2 && seen[b.id()] >= 2 && seen[g.id()] >= 2;
      },
      3000);
  for (const Event* e : {&a, &b, &g}) ASSERT_EQ(e->disable(), 0);
  for (Rec& r : ring.drain()) records.push_back(std::move(r));

  for (const Rec& r : records) {
    ASSERT_EQ(r.type(), PERF_RECORD_SAMPLE);
    abi::ParsedSample s;
    ASSERT_TRUE(parse(r, sampling_attr(), s));
    EXPECT_TRUE(ids.count(s.identifier)) << s.identifier;
    EXPECT_EQ(s.tid, static_cast<std::uint32_t>(this_tid()));
  }
  EXPECT_GE(seen[a.id()], 2);
  EXPECT_GE(seen[b.id()], 2);
  EXPECT_GE(seen[g.id()], 2);
}

// PERF_FLAG_FD_OUTPUT redirects into group_fd's ring and, without FD_NO_GROUP, also joins its group
// (visible in read()'s nr). The target must be mapped; with group_fd=-1 the flag is ignored.
TEST_P(Redirect, FdOutputFlag) {
  perf_event_attr leader_attr = sampling_attr();
  leader_attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
  Event a(perf(), leader_attr);
  ASSERT_TRUE(a.ok());
  Ring ring(perf(), a.fd(), 1);
  ASSERT_TRUE(ring.ok());
  std::vector<std::uint64_t> words = perf().read_words(a.fd());
  ASSERT_GE(words.size(), 1u);
  EXPECT_EQ(words[0], 1u);

  Event joined(perf(), sampling_attr(), 0, -1, a.fd(), PERF_FLAG_FD_OUTPUT);
  ASSERT_TRUE(joined.ok()) << strerror(joined.error());
  words = perf().read_words(a.fd());
  ASSERT_EQ(words.size(), 5u);  // nr, {value, id} x 2
  EXPECT_EQ(words[0], 2u);
  EXPECT_EQ(words[2], a.id());
  EXPECT_EQ(words[4], joined.id());
  EXPECT_EQ(try_map(joined, 1), EBUSY);

  Event alone(perf(), sampling_attr(), 0, -1, a.fd(), PERF_FLAG_FD_OUTPUT | PERF_FLAG_FD_NO_GROUP);
  ASSERT_TRUE(alone.ok()) << strerror(alone.error());
  words = perf().read_words(a.fd());
  ASSERT_GE(words.size(), 1u);
  EXPECT_EQ(words[0], 2u) << "FD_NO_GROUP: not a member";
  EXPECT_EQ(try_map(alone, 1), EBUSY);
  ASSERT_EQ(alone.enable(), 0);
  EXPECT_TRUE(burn_until([&] { return ring.head() != 0; }, 2000));
  ASSERT_EQ(alone.disable(), 0);
  const std::vector<Rec> records = ring.drain();
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.front().at<std::uint64_t>(8), alone.id());

  Event unmapped(perf(), sampling_attr());
  ASSERT_TRUE(unmapped.ok());
  const int no_ring = perf().open(sampling_attr(), 0, -1, unmapped.fd(),
                                  PERF_FLAG_FD_OUTPUT | PERF_FLAG_FD_NO_GROUP);
  EXPECT_EQ(no_ring, -EINVAL);
  if (no_ring >= 0) perf().close(no_ring);
  const int no_ring_group = perf().open(sampling_attr(), 0, -1, unmapped.fd(), PERF_FLAG_FD_OUTPUT);
  EXPECT_EQ(no_ring_group, -EINVAL);
  if (no_ring_group >= 0) perf().close(no_ring_group);

  Event ignored(perf(), sampling_attr(), 0, -1, -1, PERF_FLAG_FD_OUTPUT);
  ASSERT_TRUE(ignored.ok()) << strerror(ignored.error());
  EXPECT_EQ(try_map(ignored, 1), 0);
}

// poll() of a redirected event reads the shared buffer's wake-up bits: no POLLHUP, and whichever
// event polls first takes them.
TEST_P(Redirect, RedirectedEventPollsTheSharedBuffer) {
  Event a(perf(), sampling_attr());
  perf_event_attr b_attr = sampling_attr();
  b_attr.wakeup_events = 1;  // the writing event's setting counts
  Event b(perf(), b_attr);
  ASSERT_TRUE(a.ok() && b.ok());
  Ring ring(perf(), a.fd(), 16);
  ASSERT_TRUE(ring.ok());
  ASSERT_EQ(set_output(b, a), 0);
  EXPECT_EQ(perf().poll_now(b.fd()), 0);

  ASSERT_EQ(b.enable(), 0);
  std::uint64_t head = 0;
  EXPECT_TRUE(burn_until([&] { return (head = ring.head()) != 0; }, 2000));
  EXPECT_EQ(perf().poll_now(b.fd()) & POLLIN, POLLIN);
  if (ring.head() == head) {
    EXPECT_EQ(perf().poll_now(a.fd()), 0) << "taken by the poll of b";
  }
  EXPECT_TRUE(burn_until([&] { return ring.head() != head; }, 2000));
  ASSERT_EQ(b.disable(), 0);
  EXPECT_EQ(perf().poll_now(a.fd()) & POLLIN, POLLIN);
}

// When the last mapping of a buffer goes away, every event writing into it is detached: they
// report POLLHUP and may map a buffer of any size.
TEST_P(Redirect, UnmappingTheTargetDetaches) {
  Event a(perf(), sampling_attr());
  Event b(perf(), sampling_attr());
  ASSERT_TRUE(a.ok() && b.ok());
  {
    Ring ring(perf(), a.fd(), 1);
    ASSERT_TRUE(ring.ok());
    ASSERT_EQ(set_output(b, a), 0);
    EXPECT_EQ(try_map(b, 2), EINVAL);
  }
  EXPECT_EQ(perf().poll_now(a.fd()), POLLHUP);
  EXPECT_EQ(perf().poll_now(b.fd()), POLLHUP);
  EXPECT_EQ(try_map(b, 2), 0);
  EXPECT_EQ(try_map(a, 4), 0);
}

CONFORMANCE_TARGETS(Redirect);

}  // namespace
}  // namespace userperf::conformance
