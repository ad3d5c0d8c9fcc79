// Wake-ups and poll(), kernel vs userperf (kernel-perf-spec §1.3 step 8, §1.7; kernel-oracle.md
// §4).
//
// The sampled thread is the polling thread, so poll() is called with a zero timeout between
// bursts of CPU. Both the kernel (hrtimer interrupt on this CPU) and userperf (signal on this
// thread) finish an output, wake-up included, before the thread runs again, so each poll's result
// is exactly predictable from data_head: POLLIN iff a wake-up stamp was issued since the previous
// poll, under the kernel's rules: a stamp each `wakeup_events` samples, and a stamp whenever the
// written distance exceeds the last stamp by more than the watermark.
#include <string>

#include "conformance/kernel_support.hpp"

namespace userperf::conformance {
namespace {

// 8 header + 24 (IP TID TIME) + 8 size + 208 stack + 8 dyn_size.
constexpr std::uint64_t kRecord = 256;

perf_event_attr wakeup_attr() {
  perf_event_attr attr =
      clock_attr(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_STACK_USER);
  attr.sample_stack_user = kRecord - 48;
  return attr;
}

struct WakeupCase {
  const char* name;
  std::uint32_t wakeup_events;
  std::uint32_t wakeup_watermark;  // non-zero: attr.watermark = 1
  std::size_t data_pages;
  bool consume;        // drain after every poll
  int wanted_wakeups;  // stop after this many POLLINs (0: run until the ring is full)
};

// Wake-up stamps issued by the time `records` records of kRecord bytes were written.
std::uint64_t stamps(const WakeupCase& c, std::uint64_t records, std::uint64_t data_size) {
  const std::uint64_t watermark = c.wakeup_watermark != 0
                                      ? std::min<std::uint64_t>(c.wakeup_watermark, data_size)
                                      : data_size / 2;
  std::uint64_t wakeup = 0;
  std::uint64_t n = 0;
  for (std::uint64_t k = 1; k <= records; ++k) {
    if (k * kRecord - wakeup > watermark) {
      wakeup += watermark;
      ++n;
    }
    if (c.wakeup_watermark == 0 && c.wakeup_events != 0 && k % c.wakeup_events == 0) ++n;
  }
  return n;
}

struct PollLog {
  int wakeups = 0;
  int quiet_repolls = 0;  // immediate re-polls after a POLLIN that returned nothing
  std::uint64_t first_wakeup_head = 0;
};

// Runs the case, checking every poll against the stamps; returns what happened.
PollLog run_case(const Perf& perf, const WakeupCase& c) {
  PollLog log;
  perf_event_attr attr = wakeup_attr();
  if (c.wakeup_watermark != 0) {
    attr.watermark = 1;
    attr.wakeup_watermark = c.wakeup_watermark;
  } else {
    attr.wakeup_events = c.wakeup_events;
  }
  Event e(perf, attr);
  EXPECT_TRUE(e.ok()) << strerror(e.error());
  if (!e.ok()) return log;
  Ring ring(perf, e.fd(), c.data_pages);
  EXPECT_TRUE(ring.ok());
  if (!ring.ok()) return log;
  const std::uint64_t size = ring.data_size();

  // [records before, records after] around the previous poll.
  std::uint64_t prev_lo = 0;
  std::uint64_t prev_hi = 0;
  auto check_poll = [&](const char* which) {
    const std::uint64_t lo = ring.head() / kRecord;
    const int revents = perf.poll_now(e.fd());
    const std::uint64_t hi = ring.head() / kRecord;
    const bool woke = revents > 0 && (revents & POLLIN);
    EXPECT_GE(revents, 0);
    EXPECT_EQ(revents & ~(POLLIN | POLLRDNORM), 0) << revents;
    if (woke) {
      EXPECT_GT(stamps(c, hi, size), stamps(c, prev_lo, size))
          << which << " POLLIN without a stamp at " << lo << ".." << hi
          << " records (previous poll " << prev_lo << ".." << prev_hi << ")";
    } else {
      EXPECT_LE(stamps(c, lo, size), stamps(c, prev_hi, size))
          << which << " no POLLIN although a stamp was issued by " << lo
          << " records (previous poll at " << prev_lo << ".." << prev_hi << ")";
    }
    prev_lo = lo;
    prev_hi = hi;
    return woke;
  };

  EXPECT_EQ(e.enable(), 0);
  std::uint64_t seen = 0;
  const auto full = [&] { return !c.consume && ring.head() + kRecord > size - 1; };
  while (c.wanted_wakeups == 0 || log.wakeups < c.wanted_wakeups) {
    if (!burn_until([&] { return ring.head() != seen; }, 2000)) {
      ADD_FAILURE() << "no new sample within 2 s";
      break;
    }
    seen = ring.head();
    if (check_poll("poll")) {
      if (log.wakeups++ == 0) log.first_wakeup_head = seen;
      // Edge-like: the bits were cleared by the first poll.
      if (ring.head() == seen && !check_poll("re-poll")) ++log.quiet_repolls;
    }
    if (c.consume) ring.drain();
    if (full()) break;
  }
  EXPECT_EQ(e.disable(), 0);
  return log;
}

class Wakeup : public TargetTest {};

TEST_P(Wakeup, EveryNSamples) {
  const PollLog log = run_case(perf(), {"wakeup_events=3", 3, 0, 16, true, 4});
  EXPECT_EQ(log.wakeups, 4);
  EXPECT_GE(log.first_wakeup_head, 3 * kRecord);
  EXPECT_GT(log.quiet_repolls, 0);
}

TEST_P(Wakeup, EverySample) {
  const PollLog log = run_case(perf(), {"wakeup_events=1", 1, 0, 16, true, 3});
  EXPECT_EQ(log.wakeups, 3);
  EXPECT_GE(log.first_wakeup_head, kRecord);
}

// Without wakeup_events the watermark is half the buffer: the first wake-up once head > 2048.
TEST_P(Wakeup, DefaultHalfBufferWatermark) {
  const PollLog log = run_case(perf(), {"default watermark", 0, 0, 1, true, 2});
  EXPECT_EQ(log.wakeups, 2);
  EXPECT_GE(log.first_wakeup_head, 9 * kRecord);
}

// The half-buffer watermark also applies in wakeup_events mode.
TEST_P(Wakeup, HalfBufferWatermarkBeatsLargeWakeupEvents) {
  const PollLog log = run_case(perf(), {"wakeup_events=1000", 1000, 0, 1, true, 1});
  EXPECT_EQ(log.wakeups, 1);
  EXPECT_GE(log.first_wakeup_head, 9 * kRecord);
}

// watermark=1: a wake-up when the distance is strictly greater than wakeup_watermark, so 512
// bytes (2 records) do not wake and 768 do.
TEST_P(Wakeup, WatermarkIsStrictlyGreater) {
  const PollLog log = run_case(perf(), {"wakeup_watermark=512", 0, 512, 16, true, 3});
  EXPECT_EQ(log.wakeups, 3);
  EXPECT_GE(log.first_wakeup_head, 3 * kRecord);
}

// A watermark at least the buffer size never fires on a writable ring nobody reads.
TEST_P(Wakeup, WatermarkAboveTheBufferNeverWakes) {
  const PollLog log = run_case(perf(), {"wakeup_watermark=100000", 0, 100000, 1, false, 0});
  EXPECT_EQ(log.wakeups, 0);
}

// No buffer attached: POLLHUP at once.
TEST_P(Wakeup, UnmappedEventHangsUp) {
  Event e(perf(), wakeup_attr());
  ASSERT_TRUE(e.ok()) << strerror(e.error());
  EXPECT_EQ(perf().poll_now(e.fd()), POLLHUP);
  pollfd p{e.fd(), POLLIN, 0};
  EXPECT_EQ(perf().poll(&p, 1, 1000), 1);
  EXPECT_EQ(p.revents, POLLHUP);
}

CONFORMANCE_TARGETS(Wakeup);

}  // namespace
}  // namespace userperf::conformance
