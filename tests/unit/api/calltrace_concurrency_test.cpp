// The calltrace write path while another thread ends its AUX handle (run under TSan too). The
// traced thread owns its area and stores entries without a lock or a grace period
// (core::AuxStream); disable, enable, munmap and close run on another thread meanwhile, and each of
// them ends the handle the owner is storing into. The owner must never store into a handle that was
// ended, nor into an area that was unmapped or an event that was freed, and the trace must stay
// whole: every window decodes, and the count says what was stored.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "api/engine_instance.hpp"
#include "pmu/aux_sources/calltrace_pmu.hpp"
#include "support/trace_sources.hpp"
#include "trace/calltrace_format.hpp"
#include "userperf/calltrace.h"
#include "userperf/userperf.h"

namespace userperf {
namespace {

using testing::MappedAux;

pmu::CalltracePmu::Stats stats(int fd) {
  core::Event* event = api::engine().event(fd);
  if (event == nullptr) return {};
  return static_cast<pmu::CalltracePmu*>(event->pmu)->stats(*event);
}

// Waits (up to `limit`) until `pred` holds.
template <class Pred>
bool eventually(Pred pred, std::chrono::seconds limit = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

TEST(CalltraceConcurrency, AnotherThreadEndsTheOwnersHandleWhileItTraces) {
  std::atomic<pid_t> tid{0};
  std::atomic<std::uintptr_t> token{0};
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> pairs{0};
  std::thread traced([&] {
    token = ring::aux_thread_token();
    tid = gettid();
    for (std::uint64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
      void* fn = reinterpret_cast<void*>(0x4000'0000 + 0x40 * (i % 64));
      userperf_calltrace_enter(fn, reinterpret_cast<void*>(0x4100'0000));
      userperf_calltrace_exit(fn, nullptr);
      pairs.store(i + 1, std::memory_order_relaxed);
    }
  });
  struct Join {  // also when an assertion returns early
    std::atomic<bool>& stop;
    std::thread& thread;
    ~Join() {
      stop = true;
      thread.join();
    }
  } join{stop, traced};
  ASSERT_TRUE(eventually([&] { return tid.load() != 0; }));

  perf_event_attr attr = testing::source_attr("calltrace");
  int fd = userperf_perf_event_open(&attr, tid.load(), -1, -1, 0);
  ASSERT_GE(fd, 0) << strerror(errno);
  auto maps = std::make_unique<MappedAux>(fd, 4, 2, /*overwrite=*/true);
  ASSERT_TRUE(maps->ok()) << strerror(maps->map_errno);
  core::Event* ev = api::engine().event(fd);
  const ring::AuxWriter& writer =
      static_cast<pmu::CalltracePmu*>(ev->pmu)->source_of(*ev)->stream.writer();

  // Each round: the traced thread claims the area and stores through its owned path, then this
  // thread disables the event (the handle ends under the byte lock, revoking the owner first).
  constexpr int kRounds = 100;
  // Rounds in which the traced thread took the bias. It does within microseconds when the
  // machine is idle; under make test's parallel load a round has stayed on the locked path for
  // 10 s (cause not found yet: see the issue note of W2 3/7). The locked path is correct, only
  // slower, so what this test needs is that the owned path was exercised under the revocations.
  int owned_rounds = 0;
  for (int round = 0; round < kRounds; ++round) {
    const std::uint64_t before = stats(fd).recorded;
    ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
    if (ring::aux_bias_enabled() &&
        eventually([&] { return writer.owner.load() == token.load(); }, std::chrono::seconds(1))) {
      ++owned_rounds;
    }
    ASSERT_TRUE(eventually([&] { return stats(fd).recorded >= before + 200; }))
        << "round " << round << ": " << stats(fd).recorded - before << " stored, "
        << stats(fd).dropped << " dropped";
    ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
    EXPECT_EQ(writer.owner.load(), 0u) << "the disable revoked the owner";
    // Disabled: no byte moves any more, and the newest bytes are whole entries. (The counters
    // of an entry stored just before the disable may still move once: they are counted after
    // the store, outside it.)
    const std::uint64_t head = maps->aux_head();
    std::vector<trace::CallEvent> events;
    const Expected<void> decoded = trace::decode_calltrace(testing::newest_bytes(*maps), events);
    ASSERT_TRUE(decoded) << "round " << round << ": " << decoded.error().message << " at "
                         << decoded.error().offset;
    ASSERT_FALSE(events.empty());
    const std::uint64_t pairs_then = pairs.load();
    ASSERT_TRUE(eventually([&] { return pairs.load() >= pairs_then + 100; })) << "round " << round;
    EXPECT_EQ(maps->aux_head(), head) << "round " << round << ": a store after the disable";
    const std::uint64_t recorded = stats(fd).recorded;
    std::uint64_t count = 0;
    ASSERT_EQ(userperf_read(fd, &count, sizeof count), 8);
    EXPECT_EQ(count, recorded) << "round " << round;
  }
  if (ring::aux_bias_enabled()) {
    EXPECT_GT(owned_rounds, kRounds / 2) << "the traced thread owned the area in most handles";
  }

  // The area goes away while the traced thread stores into it, then the event itself.
  ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  const std::uint64_t before = stats(fd).recorded;
  ASSERT_TRUE(eventually([&] { return stats(fd).recorded >= before + 200; }));
  maps.reset();
  const std::uint64_t after_unmap = pairs.load();
  ASSERT_TRUE(eventually([&] { return pairs.load() >= after_unmap + 1000; }));
  ASSERT_EQ(userperf_close(fd), 0);
  const std::uint64_t after_close = pairs.load();
  ASSERT_TRUE(eventually([&] { return pairs.load() >= after_close + 1000; }));
}

}  // namespace
}  // namespace userperf
