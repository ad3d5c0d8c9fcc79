// The calltrace source: a program compiled with -finstrument-functions (calltrace_fixture.c) and
// linked with userperf_calltrace_hooks is traced on threads that have a calltrace event, and the
// decoded trace is exactly its calls.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "api/engine_instance.hpp"
#include "pmu/aux_sources/calltrace_pmu.hpp"
#include "support/trace_sources.hpp"
#include "trace/calltrace_format.hpp"
#include "unit/api/calltrace_fixture.h"
#include "userperf/calltrace.h"
#include "userperf/userperf.h"

namespace userperf {
namespace {

using testing::MappedAux;
using testing::OwnedFd;

std::uint64_t address(int (*fn)(int)) {
  return reinterpret_cast<std::uintptr_t>(fn);
}

std::vector<trace::CallEvent> decode(const std::vector<std::uint8_t>& bytes) {
  std::vector<trace::CallEvent> events;
  const Expected<void> decoded = trace::decode_calltrace(bytes, events);
  EXPECT_TRUE(decoded) << decoded.error().message << " at " << decoded.error().offset;
  return events;
}

pmu::CalltracePmu::Stats stats(int fd) {
  core::Event* event = api::engine().event(fd);
  if (event == nullptr) return {};
  return static_cast<pmu::CalltracePmu*>(event->pmu)->stats(*event);
}

TEST(CalltracePmu, TracesInstrumentedCalls) {
  perf_event_attr attr = testing::source_attr("calltrace");
  OwnedFd fd(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(fd, 0) << strerror(errno);
  MappedAux m(fd, 4, 16, /*overwrite=*/false);
  ASSERT_TRUE(m.ok()) << strerror(m.map_errno);
  EXPECT_EQ(calltrace_fixture_a(1), 14);  // not enabled yet: not traced
  ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  EXPECT_EQ(calltrace_fixture_a(2), 17);
  ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
  EXPECT_EQ(calltrace_fixture_a(3), 20);  // disabled again

  const auto events = decode(testing::consume(m));
  const std::uint64_t a = address(calltrace_fixture_a);
  const std::uint64_t b = address(calltrace_fixture_b);
  const std::uint64_t c = address(calltrace_fixture_c);
  const std::vector<std::pair<bool, std::uint64_t>> want = {
      {false, a}, {false, b}, {false, c}, {true, c}, {true, b}, {false, c}, {true, c}, {true, a}};
  ASSERT_EQ(events.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(events[i].exit, want[i].first) << i;
    EXPECT_EQ(events[i].function, want[i].second) << i;
    EXPECT_TRUE(events[i].timed) << i;
    if (i > 0) {
      EXPECT_GE(events[i].time, events[i - 1].time) << i;
    }
  }
  // Call sites: b and the second c are called from inside a, the first c from inside b.
  auto inside = [](std::uint64_t site, std::uint64_t fn) { return site > fn && site < fn + 512; };
  EXPECT_TRUE(inside(events[1].call_site, a)) << std::hex << events[1].call_site;
  EXPECT_TRUE(inside(events[2].call_site, b)) << std::hex << events[2].call_site;
  EXPECT_TRUE(inside(events[5].call_site, a)) << std::hex << events[5].call_site;
  EXPECT_NE(events[0].call_site, 0u);
  EXPECT_EQ(stats(fd).recorded, 8u);
  std::uint64_t count = 0;
  ASSERT_EQ(userperf_read(fd, &count, sizeof count), 8);
  EXPECT_EQ(count, 8u);
}

TEST(CalltracePmu, OnlyTheTargetThreadIsTraced) {
  std::atomic<pid_t> worker_tid{0};
  std::atomic<int> phase{0};
  std::thread worker([&] {
    worker_tid = gettid();
    while (phase.load() == 0) std::this_thread::yield();
    calltrace_fixture_c(1);
    phase = 2;
  });
  while (worker_tid.load() == 0) std::this_thread::yield();
  perf_event_attr attr = testing::source_attr("calltrace");
  attr.disabled = 0;
  OwnedFd fd(userperf_perf_event_open(&attr, worker_tid.load(), -1, -1, 0));
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    MappedAux m(fd, 4, 4, /*overwrite=*/true);
    ASSERT_TRUE(m.ok()) << strerror(m.map_errno);
    calltrace_fixture_b(1);  // this thread: no event
    phase = 1;
    worker.join();
    const auto events = decode(testing::newest_bytes(m));
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].function, address(calltrace_fixture_c));
    EXPECT_TRUE(events[1].exit);
  }
}

TEST(CalltracePmu, Refusals) {
  perf_event_attr attr = testing::source_attr("calltrace");
  OwnedFd fd(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(fd, 0);
  EXPECT_EQ(userperf_perf_event_open(&attr, 0, -1, -1, 0), -1);  // one per thread
  EXPECT_EQ(errno, EBUSY);
  EXPECT_EQ(userperf_perf_event_open(&attr, -1, 0, -1, 0), -1);  // CPU-wide
  EXPECT_EQ(errno, EOPNOTSUPP);
  attr.config = 1;
  EXPECT_EQ(userperf_perf_event_open(&attr, gettid(), -1, -1, 0), -1);
  EXPECT_EQ(errno, EINVAL);
}

// A hook inside a signal handler that interrupted a hook on the same thread is dropped and
// counted, never deadlocks, and leaves a decodable trace.
std::atomic<std::uint64_t> g_handler_calls{0};

void nested_hook(int) {
  userperf_calltrace_enter(reinterpret_cast<void*>(0x7777'0000), nullptr);
  userperf_calltrace_exit(reinterpret_cast<void*>(0x7777'0000), nullptr);
  g_handler_calls.fetch_add(2);
}

TEST(CalltracePmu, SignalHandlersNestWithoutDeadlock) {
  struct sigaction sa {};
  struct sigaction old {};
  sa.sa_handler = nested_hook;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR2, &sa, &old), 0);
  perf_event_attr attr = testing::source_attr("calltrace");
  OwnedFd fd(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(fd, 0) << strerror(errno);
  MappedAux m(fd, 4, 256, /*overwrite=*/false);
  ASSERT_TRUE(m.ok()) << strerror(m.map_errno);
  ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  const pthread_t self = pthread_self();
  std::atomic<bool> done{false};
  std::thread killer([&] {
    while (!done.load()) {
      pthread_kill(self, SIGUSR2);
      std::this_thread::yield();
    }
  });
  constexpr int kPairs = 5000;
  for (int i = 0; i < kPairs; ++i) {
    userperf_calltrace_enter(reinterpret_cast<void*>(0x4000'0000 + i), nullptr);
    userperf_calltrace_exit(reinterpret_cast<void*>(0x4000'0000 + i), nullptr);
  }
  done = true;
  killer.join();
  ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
  sigaction(SIGUSR2, &old, nullptr);
  const auto s = stats(fd);
  const auto events = decode(testing::consume(m));
  EXPECT_EQ(events.size(), s.recorded);
  EXPECT_EQ(s.recorded + s.nested + s.dropped, 2u * kPairs + g_handler_calls.load());
}

}  // namespace
}  // namespace userperf
