// Sample contents: raw fragments (sized once, each byte copied once, zeroed padding), oversized
// samples refused, stack clamping, side-band records with the sample_id trailer, throttling.
#include <gtest/gtest.h>

#include <time.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "support/test_events.hpp"

namespace userperf {
namespace {

using testing::field_at;
using testing::fire;
using testing::MappedRing;
using testing::record_type;
using testing::test_attr;

// Copy callback that counts every byte it copies.
std::size_t g_callback_bytes = 0;
std::size_t counting_copy(void* dst, const void* src, std::size_t offset, std::size_t len) {
  std::memcpy(dst, static_cast<const std::uint8_t*>(src) + offset, len);
  g_callback_bytes += len;
  return 0;
}

TEST(RawFragments, SizedOnceCopiedOncePaddingZeroed) {
  perf_event_attr attr = test_attr(PERF_SAMPLE_RAW);
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0);
  {
    MappedRing ring(fd, 1);
    // Fill the ring with 0xaa records until it wraps, so the record below lands on stale bytes
    // and unwritten padding would show them.
    std::vector<std::uint8_t> junk(1004, 0xaa);  // 4 + 1004 needs no padding of its own
    core::RawRecord dirty;
    dirty.frag = {junk.data(), static_cast<std::uint32_t>(junk.size()), nullptr, nullptr};
    core::SampleData data;
    data.raw = &dirty;
    for (int i = 0; i < 5; ++i) {
      fire(fd, 1, data);
      ring.drain();
    }
    ASSERT_GT(ring.control()->data_head, 4096u);
    const char meta[5] = {'m', 'e', 't', 'a', '!'};
    std::vector<std::uint8_t> payload(13);
    for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i);
    core::RawFragment second{payload.data(), 13, counting_copy, nullptr};
    core::RawRecord raw;
    raw.frag = {meta, 5, nullptr, &second};
    data.raw = &raw;
    g_callback_bytes = 0;
    fire(fd, 1, data);
    EXPECT_EQ(g_callback_bytes, 13u) << "the callback fragment is copied exactly once";
    EXPECT_EQ(raw.size, 20u) << "4 + size is a multiple of 8: 18 bytes of payload, 2 of pad";
    EXPECT_EQ(raw.pad, 2u);
    const auto records = ring.drain();
    ASSERT_EQ(records.size(), 1u);
    const auto& r = records[0];
    ASSERT_EQ(r.size(), 8u + 4 + 20);
    EXPECT_EQ(field_at<std::uint32_t>(r, 8), 20u);
    EXPECT_EQ(std::memcmp(r.data() + 12, meta, 5), 0);
    EXPECT_EQ(std::memcmp(r.data() + 17, payload.data(), 13), 0);
    EXPECT_EQ(r[30], 0) << "padding is zeroed, not stale";
    EXPECT_EQ(r[31], 0);
  }
  testing::event_close(fd);
}

TEST(RawFragments, EmptyRawFieldAsTheKernelWritesIt) {
  perf_event_attr attr = test_attr(PERF_SAMPLE_RAW);
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  {
    MappedRing ring(fd, 1);
    fire(fd, 1);
    const auto records = ring.drain();
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].size(), 16u);
    EXPECT_EQ(field_at<std::uint32_t>(records[0], 8), 4u);
    EXPECT_EQ(field_at<std::uint32_t>(records[0], 12), 0u);
  }
  testing::event_close(fd);
}

TEST(RawFragments, OversizedPayloadIsRefusedAndCountedLost) {
  perf_event_attr attr = test_attr(PERF_SAMPLE_RAW | PERF_SAMPLE_IDENTIFIER);
  attr.read_format = PERF_FORMAT_LOST;
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  {
    MappedRing ring(fd, 32);
    std::vector<std::uint8_t> big(70000, 1);
    core::RawRecord raw;
    raw.frag = {big.data(), static_cast<std::uint32_t>(big.size()), nullptr, nullptr};
    core::SampleData data;
    data.raw = &raw;
    fire(fd, 1, data);
    EXPECT_TRUE(ring.drain().empty()) << "never a truncated, corrupt record";
    std::uint64_t v[2];
    ASSERT_EQ(testing::event_read(fd, v, sizeof v), 16);
    EXPECT_EQ(v[1], 1u);
    fire(fd, 1);  // the next record brings the LOST record
    const auto records = ring.drain();
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(record_type(records[0]), PERF_RECORD_LOST);
    EXPECT_EQ(field_at<std::uint64_t>(records[0], 16), 1u);
  }
  testing::event_close(fd);
}

TEST(Sample, UserStackIsClampedUnder64KiB) {
  perf_event_attr attr = test_attr(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
  attr.sample_regs_user = (1u << PERF_REG_X86_SP) | (1u << PERF_REG_X86_IP);
  attr.sample_stack_user = 65528;
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    MappedRing ring(fd, 32);
    std::vector<std::uint8_t> stack(100000, 0x5c);
    core::SampleRegs regs;
    regs.abi = PERF_SAMPLE_REGS_ABI_64;
    regs.values[PERF_REG_X86_SP] = reinterpret_cast<std::uint64_t>(stack.data());
    core::SampleExtras extras;
    extras.regs_user = &regs;
    extras.stack_user = {stack.data(), 100};
    core::SampleData data;
    data.extras = &extras;  // only 100 readable bytes: dyn_size says so
    fire(fd, 1, data);
    const auto records = ring.drain();
    ASSERT_EQ(records.size(), 1u);
    const auto& r = records[0];
    EXPECT_LE(r.size(), 65528u);
    EXPECT_EQ(r.size() % 8, 0u);
    const std::size_t stack_off = 8 + 8 + 16;  // header, abi, two regs
    const auto size = field_at<std::uint64_t>(r, stack_off);
    EXPECT_EQ(stack_off + 8 + size + 8, r.size());
    EXPECT_EQ(field_at<std::uint64_t>(r, r.size() - 8), 100u);
    EXPECT_EQ(r[stack_off + 8 + 99], 0x5c);
    EXPECT_EQ(r[stack_off + 8 + 100], 0) << "bytes past dyn_size are zeroed";
  }
  testing::event_close(fd);
}

// get_perf_callchain: exclude_callchain_user drops the user part (from PERF_CONTEXT_USER on), as
// perf record --call-graph dwarf asks; without it the whole chain is written.
TEST(Sample, ExcludeCallchainUserKeepsOnlyTheKernelPart) {
  const std::uint64_t chain[] = {PERF_CONTEXT_KERNEL, 0xffffffff81000000ull, PERF_CONTEXT_USER,
                                 0x401000, 0x402000};
  for (const bool exclude_user : {false, true}) {
    perf_event_attr attr = test_attr(PERF_SAMPLE_CALLCHAIN);
    attr.exclude_callchain_user = exclude_user;
    const int fd = testing::event_open(&attr, 0, -1, -1, 0);
    ASSERT_GE(fd, 0) << strerror(errno);
    {
      MappedRing ring(fd, 8);
      core::SampleExtras extras;
      extras.callchain = chain;
      extras.callchain_nr = 5;
      core::SampleData data;
      data.extras = &extras;
      fire(fd, 1, data);
      const auto records = ring.drain();
      ASSERT_EQ(records.size(), 1u);
      const std::uint64_t nr = field_at<std::uint64_t>(records[0], 8);
      ASSERT_EQ(nr, exclude_user ? 2u : 5u);
      ASSERT_EQ(records[0].size(), 8 + 8 + 8 * nr);
      for (std::uint64_t i = 0; i < nr; ++i) {
        EXPECT_EQ(field_at<std::uint64_t>(records[0], 16 + 8 * i), chain[i]);
      }
    }
    testing::event_close(fd);
  }
}

// The callchain is cut at sample_max_stack addresses plus the context markers; an event that asks
// for 0 gets the engine's max_stack (EngineLimits, kernel.perf_event_max_stack), the one default.
TEST(Sample, CallchainIsCutAtTheEnginesMaxStack) {
  core::Engine& e = testing::engine();
  const core::EngineLimits saved = e.limits();
  core::EngineLimits low = saved;
  low.max_stack = 3;
  e.set_limits(low);
  std::uint64_t chain[20];
  for (std::uint64_t i = 0; i < 20; ++i) chain[i] = 0x401000 + 16 * i;
  for (const std::uint16_t asked : {0, 2}) {
    perf_event_attr attr = test_attr(PERF_SAMPLE_CALLCHAIN);
    attr.sample_max_stack = asked;
    const int fd = testing::event_open(&attr, 0, -1, -1, 0);
    ASSERT_GE(fd, 0) << strerror(errno);
    {
      MappedRing ring(fd, 8);
      core::SampleExtras extras;
      extras.callchain = chain;
      extras.callchain_nr = 20;
      core::SampleData data;
      data.extras = &extras;
      fire(fd, 1, data);
      const auto records = ring.drain();
      ASSERT_EQ(records.size(), 1u);
      EXPECT_EQ(field_at<std::uint64_t>(records[0], 8), (asked != 0 ? asked : 3u) + 8u);
    }
    testing::event_close(fd);
  }
  perf_event_attr deeper = test_attr(PERF_SAMPLE_CALLCHAIN);
  deeper.sample_max_stack = 4;
  EXPECT_EQ(testing::event_open(&deeper, 0, -1, -1, 0), -1);
  EXPECT_EQ(errno, EOVERFLOW);
  e.set_limits(saved);
}

TEST(Sideband, RecordsCarryTheSampleIdTrailer) {
  perf_event_attr attr = test_attr(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER);
  attr.sample_id_all = 1;
  attr.comm = 1;
  attr.comm_exec = 1;
  attr.mmap = 1;
  attr.mmap2 = 1;
  attr.task = 1;
  attr.ksymbol = 1;
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  {
    MappedRing ring(fd, 4);
    core::Engine& e = testing::engine();
    e.comm(getpid(), gettid(), "oracle-comm", true);
    e.mmap2(getpid(), gettid(), 0x400000, 0x1000, 0, 8, 1, 1234, PROT_READ | PROT_EXEC, MAP_PRIVATE,
            "/usr/bin/true", true);
    e.fork(getpid(), getppid(), gettid() + 1, gettid());
    e.ksymbol(0xffffffffa0000000, 64, PERF_RECORD_KSYMBOL_TYPE_BPF, 0, "bpf_prog_1234");
    const auto records = ring.drain();
    ASSERT_EQ(records.size(), 4u);
    const std::uint64_t id = e.event(fd)->id;
    // COMM: pid, tid, "oracle-comm\0" padded to 16, then pid/tid, time, identifier = 24 bytes.
    EXPECT_EQ(record_type(records[0]), PERF_RECORD_COMM);
    EXPECT_EQ(records[0].size(), 8u + 8 + 16 + 24);
    EXPECT_EQ(reinterpret_cast<const perf_event_header*>(records[0].data())->misc,
              PERF_RECORD_MISC_COMM_EXEC);
    EXPECT_EQ(field_at<std::uint64_t>(records[0], records[0].size() - 8), id);
    EXPECT_EQ(record_type(records[1]), PERF_RECORD_MMAP2);
    EXPECT_EQ(records[1].size() % 8, 0u);
    // header, pid/tid, addr/len/pgoff, maj/min, ino/ino_generation, then prot.
    EXPECT_EQ(field_at<std::uint32_t>(records[1], 8 + 8 + 24 + 8 + 16), PROT_READ | PROT_EXEC);
    EXPECT_EQ(record_type(records[2]), PERF_RECORD_FORK);
    EXPECT_EQ(records[2].size(), 8u + 24 + 24);
    EXPECT_EQ(record_type(records[3]), PERF_RECORD_KSYMBOL);
  }
  testing::event_close(fd);
}

// A mapping path of 4,095 characters or more (PATH_MAX with its NUL): the record carries its
// first 4,095 and a NUL, padded to 8, and nothing is written past the string buffer (the padding's
// memset wrote 7 bytes past it; the ASan build of this test caught it).
TEST(Sideband, LongestPathIsCutAtTheStringBuffer) {
  perf_event_attr attr = test_attr(PERF_SAMPLE_TID);
  attr.sample_id_all = 1;
  attr.mmap = 1;
  attr.mmap2 = 1;
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  {
    MappedRing ring(fd, 8);
    core::Engine& e = testing::engine();
    for (const std::size_t length : {4090u, 4095u, 5000u}) {
      const std::string path = "/" + std::string(length - 1, 'p');
      e.mmap2(getpid(), gettid(), 0x400000, 0x1000, 0, 8, 1, 1234, PROT_READ | PROT_EXEC,
              MAP_PRIVATE, path.c_str(), true);
      const auto records = ring.drain();
      ASSERT_EQ(records.size(), 1u) << length;
      ASSERT_EQ(record_type(records[0]), PERF_RECORD_MMAP2);
      // header, pid/tid, addr/len/pgoff, maj/min, ino/ino_generation, prot/flags, then the name.
      constexpr std::size_t kName = 8 + 8 + 24 + 8 + 16 + 8;
      const std::size_t kept = std::min<std::size_t>(length, 4095);
      EXPECT_EQ(records[0].size(), kName + ((kept + 1 + 7) & ~std::size_t{7}) + 8) << length;
      const auto* name = reinterpret_cast<const char*>(records[0].data() + kName);
      EXPECT_EQ(std::string(name, kept), path.substr(0, kept)) << length;
      for (std::size_t i = kName + kept; i < records[0].size() - 8; ++i) {
        EXPECT_EQ(records[0][i], 0) << "padding at " << i << ", length " << length;
      }
    }
  }
  testing::event_close(fd);
}

TEST(Throttle, TooManyOverflowsPerTickThrottleThenUnthrottle) {
  core::Engine& e = testing::engine();
  const core::EngineLimits saved = e.limits();
  core::EngineLimits low = saved;
  low.max_sample_rate = 1000;  // 4 samples per 4 ms tick
  e.set_limits(low);
  perf_event_attr attr = test_attr(PERF_SAMPLE_TIME);
  attr.sample_id_all = 1;
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  {
    MappedRing ring(fd, 8);
    fire(fd, 50);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    fire(fd, 1);
    int samples = 0, throttle = 0, unthrottle = 0;
    for (const auto& r : ring.drain()) {
      samples += record_type(r) == PERF_RECORD_SAMPLE;
      throttle += record_type(r) == PERF_RECORD_THROTTLE;
      unthrottle += record_type(r) == PERF_RECORD_UNTHROTTLE;
      if (record_type(r) == PERF_RECORD_THROTTLE) {
        EXPECT_EQ(r.size(), 8u + 24 + 8);  // time, id, stream_id + the TIME trailer
      }
    }
    EXPECT_GE(throttle, 1);
    EXPECT_EQ(unthrottle, throttle);
    EXPECT_LT(samples, 50);
  }
  testing::event_close(fd);
  e.set_limits(saved);
}

// The engine with 4 samples per 100 ms tick (max_sample_rate 40, HZ 10), restored on
// destruction; begin_tick() waits for a tick to start, so that what a test does in the next
// milliseconds falls in one tick.
class FourPerTick {
 public:
  FourPerTick() : saved_(testing::engine().limits()) {
    core::EngineLimits low = saved_;
    low.max_sample_rate = 40;
    low.hz = 10;
    testing::engine().set_limits(low);
  }
  ~FourPerTick() { testing::engine().set_limits(saved_); }
  FourPerTick(const FourPerTick&) = delete;
  FourPerTick& operator=(const FourPerTick&) = delete;

  static constexpr int kLimit = 4;
  static void begin_tick() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);  // the events' clock (no use_clockid)
    const long into_tick = now.tv_nsec % kTickNs;
    std::this_thread::sleep_for(std::chrono::nanoseconds(kTickNs - into_tick + 1'000'000));
  }

 private:
  static constexpr long kTickNs = 100'000'000;
  core::EngineLimits saved_;
};

struct RecordCounts {
  int samples = 0, throttle = 0, unthrottle = 0;
};

RecordCounts count_records(MappedRing& ring) {
  RecordCounts c;
  for (const auto& r : ring.drain()) {
    c.samples += record_type(r) == PERF_RECORD_SAMPLE;
    c.throttle += record_type(r) == PERF_RECORD_THROTTLE;
    c.unthrottle += record_type(r) == PERF_RECORD_UNTHROTTLE;
  }
  return c;
}

// perf_swevent_overflow passes throttle = 0 for the first overflow of each count, so a software
// event of period 1 counted one at a time (a tracepoint hit) is never throttled, however often it
// fires in a tick: every hit is a sample.
TEST(Throttle, SoftwareEventCountedOneAtATimeIsNeverThrottled) {
  FourPerTick limits;
  perf_event_attr attr = test_attr(PERF_SAMPLE_TIME);
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0);
  {
    MappedRing ring(fd, 16);  // 1000 samples of 16 bytes fit
    ASSERT_TRUE(ring.ok());
    FourPerTick::begin_tick();
    constexpr int kHits = 1000;  // 250 times the limit, in far less than a tick
    for (int i = 0; i < kHits; ++i) ASSERT_EQ(fire(fd, 1), 1u);
    const RecordCounts c = count_records(ring);
    EXPECT_EQ(c.samples, kHits);
    EXPECT_EQ(c.throttle, 0);
    EXPECT_EQ(c.unthrottle, 0);
    EXPECT_EQ(testing::engine().event(fd)->lost_samples.load(), 0u);
  }
  testing::event_close(fd);
}

// One count of N periods is N overflows, the later ones with throttle = 1: the event stops at the
// limit (a THROTTLE record), refuses even an unthrottled first overflow for the rest of the tick
// (perf_swevent_overflow's MAX_INTERRUPTS check), and starts again in the next tick (UNTHROTTLE).
TEST(Throttle, SoftwareEventCountOfManyPeriodsThrottlesAtTheLimit) {
  FourPerTick limits;
  perf_event_attr attr = test_attr(PERF_SAMPLE_TIME);
  attr.sample_id_all = 1;
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0);
  {
    MappedRing ring(fd, 8);
    ASSERT_TRUE(ring.ok());
    FourPerTick::begin_tick();
    EXPECT_EQ(fire(fd, 50), 50u);  // every period is consumed, throttled or not
    RecordCounts c = count_records(ring);
    EXPECT_EQ(c.samples, FourPerTick::kLimit);
    EXPECT_EQ(c.throttle, 1);
    EXPECT_EQ(c.unthrottle, 0);
    for (int i = 0; i < 10; ++i) fire(fd, 1);
    c = count_records(ring);
    EXPECT_EQ(c.samples, 0) << "a throttled event takes no overflow until the next tick";
    EXPECT_EQ(c.throttle, 0);
    FourPerTick::begin_tick();
    fire(fd, 1);
    c = count_records(ring);
    EXPECT_EQ(c.unthrottle, 1);
    EXPECT_EQ(c.samples, 1);
  }
  testing::event_close(fd);
}

// Unthrottled overflows still count towards the limit (hwc->interrupts++): past it, the second
// overflow of a count, the first that may throttle, stops the event at once.
TEST(Throttle, UnthrottledOverflowsCountTowardsTheLimit) {
  FourPerTick limits;
  perf_event_attr attr = test_attr(PERF_SAMPLE_TIME);
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0);
  {
    MappedRing ring(fd, 8);
    ASSERT_TRUE(ring.ok());
    FourPerTick::begin_tick();
    for (int i = 0; i < 10; ++i) fire(fd, 1);
    EXPECT_EQ(count_records(ring).samples, 10);
    EXPECT_EQ(fire(fd, 2), 2u);
    const RecordCounts c = count_records(ring);
    EXPECT_EQ(c.samples, 1) << "the first overflow of the count is written, the second throttles";
    EXPECT_EQ(c.throttle, 1);
  }
  testing::event_close(fd);
}

// Overflows a PMU reports one by one (a hardware interrupt; the cpu-clock/task-clock timers, as
// perf_swevent_hrtimer) pass throttle = 1: the limit applies to each.
TEST(Throttle, InterruptOverflowsThrottleAtTheLimit) {
  FourPerTick limits;
  perf_event_attr attr = test_attr(PERF_SAMPLE_TIME);
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0);
  {
    MappedRing ring(fd, 8);
    ASSERT_TRUE(ring.ok());
    core::Event* event = testing::engine().event(fd);
    auto* pmu = static_cast<testing::TestPmu*>(event->pmu);
    FourPerTick::begin_tick();
    int written = 0, throttled = 0;
    for (int i = 0; i < 50; ++i) {
      core::SampleData data;
      data.period = 1;
      const core::OverflowResult r = pmu->overflow(testing::engine(), *event, data);
      written += r == core::OverflowResult::kWritten;
      throttled += r == core::OverflowResult::kThrottled;
    }
    EXPECT_EQ(written, FourPerTick::kLimit);
    EXPECT_EQ(throttled, 50 - FourPerTick::kLimit);
    const RecordCounts c = count_records(ring);
    EXPECT_EQ(c.samples, FourPerTick::kLimit);
    EXPECT_EQ(c.throttle, 1);
  }
  testing::event_close(fd);
}

TEST(Frequency, PeriodAdaptsTowardsTheRequestedRate) {
  perf_event_attr attr = test_attr(PERF_SAMPLE_PERIOD);
  attr.freq = 1;
  attr.sample_freq = 1000;  // 1 sample per ms
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0);
  core::Event* ev = testing::engine().event(fd);
  EXPECT_EQ(ev->sample_period.load(), 1u);
  // 100 000 events per ms: the period should climb towards 100 000.
  for (int ms = 0; ms < 60; ++ms) {
    fire(fd, 100'000);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_GT(ev->sample_period.load(), 10'000u);
  testing::event_close(fd);
}

}  // namespace
}  // namespace userperf
