// The calltrace source: a program compiled with -finstrument-functions (calltrace_fixture.c) and
// linked with userperf_calltrace_hooks is traced on threads that have a calltrace event, and the
// decoded trace is exactly its calls.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "api/engine_instance.hpp"
#include "pmu/aux_sources/calltrace_pmu.hpp"
#include "support/pmu/test_pmu.hpp"
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

// ---- a signal inside the owner's store ----------------------------------------------------------
// Once the traced thread owns its AUX area (core::AuxStream's biased byte lock), each entry is
// stored with plain stores and no lock. A signal that lands inside such a store, as the recorder's
// clock signal does, may run hooks (counted as nested, not stored: the encoder is mid-entry) and
// take an AUX sample (whole entries, up to the last complete one, clear of the bytes being stored).
// Made deterministic: the engine's own mapping of the area is read-only, so the store faults; the
// SIGSEGV handler acts and then makes it writable again, and the store resumes.
struct InsideStore {
  std::uint8_t* area = nullptr;
  std::size_t length = 0;
  core::Event* sampler = nullptr;
  const ring::AuxWriter* writer = nullptr;
  int faults = 0;
  std::uintptr_t busy_seen = 0;
  std::uint64_t fired = 0;
};
InsideStore g_inside;

void on_store_fault(int, siginfo_t* info, void*) {
  InsideStore& in = g_inside;
  const auto* at = static_cast<std::uint8_t*>(info->si_addr);
  if (at < in.area || at >= in.area + in.length) abort();  // not ours: a real crash
  ++in.faults;
  in.busy_seen = in.writer->busy.load();
  userperf_calltrace_enter(reinterpret_cast<void*>(0x7777'0000), nullptr);
  userperf_calltrace_exit(reinterpret_cast<void*>(0x7777'0000), nullptr);
  in.fired += static_cast<testing::TestPmu*>(in.sampler->pmu)
                  ->count(testing::engine(), *in.sampler, 1, core::SampleData{});
  mprotect(in.area, in.length, PROT_READ | PROT_WRITE);
}

TEST(CalltracePmu, ASignalInsideTheOwnersStoreNestsAndSamplesWholeEntries) {
  if (!ring::aux_bias_enabled()) GTEST_SKIP() << "membarrier PRIVATE_EXPEDITED is unavailable";
  perf_event_attr attr = testing::source_attr("calltrace");
  OwnedFd leader(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(leader, 0) << strerror(errno);
  perf_event_attr sattr = testing::test_attr(PERF_SAMPLE_AUX);
  sattr.aux_sample_size = 4096;
  OwnedFd sampler(userperf_perf_event_open(&sattr, 0, -1, leader, 0));
  ASSERT_GE(sampler, 0) << strerror(errno);
  MappedAux m(leader, 4, 1, /*overwrite=*/true);  // one page: the entries wrap onto the oldest
  testing::MappedRing samples(sampler, 16);
  ASSERT_TRUE(m.ok() && samples.ok()) << strerror(m.map_errno);
  ASSERT_EQ(userperf_ioctl(leader, PERF_EVENT_IOC_ENABLE, 0), 0);
  core::Event* ev = api::engine().event(leader);
  ASSERT_NE(ev, nullptr);
  const ring::AuxWriter& writer =
      static_cast<pmu::CalltracePmu*>(ev->pmu)->source_of(*ev)->stream.writer();

  constexpr std::uint64_t kPairs = 400;  // ~6 KiB: the area has wrapped
  auto fn = [](std::uint64_t i) { return reinterpret_cast<void*>(0x4000'0000 + 0x40 * i); };
  for (std::uint64_t i = 0; i < kPairs; ++i) {
    userperf_calltrace_enter(fn(i), nullptr);
    userperf_calltrace_exit(fn(i), nullptr);
  }
  ASSERT_EQ(writer.owner.load(), ring::aux_thread_token()) << "the traced thread owns the area";

  ring::AuxRing* aux = ev->aux_area();
  g_inside = InsideStore{};
  g_inside.area = aux->data();
  g_inside.length = aux->size();
  g_inside.sampler = api::engine().event(sampler);
  g_inside.writer = &writer;
  struct sigaction sa {};
  struct sigaction old {};
  sa.sa_sigaction = on_store_fault;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGSEGV, &sa, &old), 0);
  ASSERT_EQ(mprotect(g_inside.area, g_inside.length, PROT_READ), 0);
  void* const last = reinterpret_cast<void*>(0x5000'0000);
  userperf_calltrace_enter(last, reinterpret_cast<void*>(0x5000'0100));  // faults in its store
  sigaction(SIGSEGV, &old, nullptr);
  userperf_calltrace_exit(last, nullptr);

  ASSERT_EQ(g_inside.faults, 1);
  EXPECT_EQ(g_inside.busy_seen, ring::aux_thread_token() | ring::AuxWriter::kAppending)
      << "the signal landed inside the owner's unlocked store";
  const auto s = stats(leader);
  EXPECT_EQ(s.nested, 2u) << "the handler's hooks are counted as nested";
  EXPECT_EQ(s.dropped, 0u);
  EXPECT_EQ(s.recorded, 2 * kPairs + 2);
  EXPECT_EQ(writer.owner.load(), ring::aux_thread_token()) << "nothing revoked the owner";

  // The sample taken inside the store: whole entries ending with the last complete one, short of
  // the area by the entry being stored (16 or 24 bytes: an enter with a call site, maybe a SYNC).
  ASSERT_EQ(g_inside.fired, 1u);
  std::vector<std::vector<std::uint8_t>> windows;
  for (const auto& r : samples.drain()) {
    if (testing::record_type(r) != PERF_RECORD_SAMPLE) continue;
    const auto size = testing::field_at<std::uint64_t>(r, 8);
    ASSERT_EQ(r.size(), 16 + size);
    windows.emplace_back(r.begin() + 16, r.end());
  }
  ASSERT_EQ(windows.size(), 1u);
  const std::size_t in_flight = m.aux_length - windows[0].size();
  EXPECT_TRUE(in_flight == 16 || in_flight == 24) << in_flight;
  const auto sampled = decode(windows[0]);
  ASSERT_FALSE(sampled.empty());
  EXPECT_TRUE(sampled.back().exit);
  EXPECT_EQ(sampled.back().function, reinterpret_cast<std::uintptr_t>(fn(kPairs - 1)));
  for (const auto& e : sampled) {
    EXPECT_NE(e.function, 0x7777'0000u);
    EXPECT_NE(e.function, 0x5000'0000u);
  }

  // The trace itself: the interrupted entry whole, the handler's hooks nowhere.
  ASSERT_EQ(userperf_ioctl(leader, PERF_EVENT_IOC_DISABLE, 0), 0);
  const auto events = decode(testing::newest_bytes(m));
  ASSERT_GE(events.size(), 4u);
  const auto& enter = events[events.size() - 2];
  EXPECT_FALSE(enter.exit);
  EXPECT_EQ(enter.function, 0x5000'0000u);
  EXPECT_EQ(enter.call_site, 0x5000'0100u);
  EXPECT_TRUE(events.back().exit);
  EXPECT_EQ(events.back().function, 0x5000'0000u);
  EXPECT_EQ(events[events.size() - 3].function, reinterpret_cast<std::uintptr_t>(fn(kPairs - 1)));
  for (const auto& e : events) EXPECT_NE(e.function, 0x7777'0000u);
}

}  // namespace
}  // namespace userperf
