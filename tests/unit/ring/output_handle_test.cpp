// The write path on its own: reservation, capacity, wrap, modes, lost accounting, wakeups.
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "ring/data_ring.hpp"
#include "ring/output_handle.hpp"
#include "ring/reader.hpp"
#include "support/process_barrier.hpp"

namespace userperf::ring {
namespace {

// Every test runs under both write disciplines: a shared ring, and the calling thread's own.
enum class Discipline { kShared, kSingleWriter };
Discipline g_discipline = Discipline::kShared;

class RingWrites : public ::testing::TestWithParam<Discipline> {
 protected:
  void SetUp() override {
    g_discipline = GetParam();
    if (g_discipline == Discipline::kSingleWriter && !support::process_barrier_available()) {
      GTEST_SKIP() << "membarrier(PRIVATE_EXPEDITED) is unavailable: every ring is shared";
    }
  }
};

std::unique_ptr<DataRing> make_ring(std::size_t pages, RingConfig config = {}) {
  if (g_discipline == Discipline::kSingleWriter) config.single_writer = gettid();
  std::unique_ptr<DataRing> ring;
  EXPECT_EQ(DataRing::create(pages, config, ring), 0);
  return ring;
}

// Writes one record of `size` bytes whose body is `fill`. Returns the status.
OutputStatus write_record(DataRing& ring, std::uint16_t size, std::uint8_t fill,
                          std::uint32_t lost_size = 24) {
  OutputHandle h;
  const OutputStatus s = h.begin(ring, size, lost_size);
  if (s != OutputStatus::kOk) return s;
  if (h.lost() != 0) {
    const perf_event_header lost{PERF_RECORD_LOST, 0, static_cast<std::uint16_t>(lost_size)};
    h.put(lost);
    h.put(std::uint64_t{7});
    h.put(h.lost());
  }
  const perf_event_header header{PERF_RECORD_SAMPLE, 0, size};
  h.put(header);
  std::vector<std::uint8_t> body(size - sizeof header, fill);
  h.copy(body.data(), body.size());
  h.end();
  return s;
}

RingView view_of(DataRing& ring) {
  return RingView{ring.control(), ring.data(), ring.data_size()};
}

std::uint64_t head_of(DataRing& ring) {
  return ring.control()->data_head;
}

TEST_P(RingWrites, ControlPageAsTheKernelInitialisesIt) {
  auto ring = make_ring(4);
  const perf_event_mmap_page* page = ring->control();
  EXPECT_EQ(page->version, 0u);
  EXPECT_EQ(page->data_offset, 4096u);
  EXPECT_EQ(page->data_size, 4u * 4096);
  EXPECT_EQ(page->size, 96u);  // offsetof(__reserved)
  EXPECT_EQ(page->cap_bit0_is_deprecated, 1u);
  EXPECT_EQ(page->data_head, 0u);
  std::unique_ptr<DataRing> bad;
  EXPECT_EQ(DataRing::create(3, {}, bad), -EINVAL);
}

TEST_P(RingWrites, ForwardRingNeverFillsCompletely) {
  auto ring = make_ring(1);
  int written = 0;
  while (write_record(*ring, 32, 0xab) == OutputStatus::kOk) ++written;
  // At most data_size - 1 bytes outstanding: 127 records of 32 bytes in 4096.
  EXPECT_EQ(written, 127);
  EXPECT_EQ(head_of(*ring), 4064u);
  EXPECT_EQ(ring->pending_lost(), 1u);
  EXPECT_EQ(write_record(*ring, 32, 0xab), OutputStatus::kLost);
  EXPECT_EQ(ring->pending_lost(), 2u);
}

TEST_P(RingWrites, LostCountIsClaimedByTheNextWriterAfterSpaceFrees) {
  auto ring = make_ring(1);
  while (write_record(*ring, 64, 1) == OutputStatus::kOk) {
  }
  write_record(*ring, 64, 1);
  write_record(*ring, 64, 1);
  EXPECT_EQ(ring->pending_lost(), 3u);
  ring->control()->data_tail = ring->control()->data_head;  // the consumer caught up
  ASSERT_EQ(write_record(*ring, 64, 2), OutputStatus::kOk);
  EXPECT_EQ(ring->pending_lost(), 0u);

  Reader reader(view_of(*ring));
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  Record r;
  ASSERT_EQ(reader.next(r), ReadStatus::kOk);
  EXPECT_EQ(r.header.type, PERF_RECORD_LOST);
  ASSERT_EQ(reader.next(r), ReadStatus::kOk);
  EXPECT_EQ(r.header.type, PERF_RECORD_SAMPLE);
  EXPECT_EQ(reader.next(r), ReadStatus::kEmpty);
  EXPECT_EQ(reader.lost(), 3u);
}

TEST_P(RingWrites, RecordsStraddleTheEndWithoutPadding) {
  auto ring = make_ring(1);
  // 4096 = 102 * 40 + 16: the 103rd record wraps with 16 bytes at the end and 24 at the start.
  for (int i = 0; i < 102; ++i) {
    ASSERT_EQ(write_record(*ring, 40, static_cast<std::uint8_t>(i)), OutputStatus::kOk);
    ring->control()->data_tail = ring->control()->data_head;
  }
  ASSERT_EQ(write_record(*ring, 40, 0x5a), OutputStatus::kOk);
  EXPECT_EQ(head_of(*ring), 103u * 40);
  Reader reader(view_of(*ring));
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  Record r;
  ASSERT_EQ(reader.next(r), ReadStatus::kOk);
  ASSERT_EQ(r.bytes.size(), 40u);
  for (std::size_t i = 8; i < 40; ++i) EXPECT_EQ(r.bytes[i], 0x5a) << i;
}

TEST_P(RingWrites, OverwriteModeIgnoresTheTail) {
  RingConfig config;
  config.overwrite = true;
  auto ring = make_ring(1, config);
  for (int i = 0; i < 500; ++i) ASSERT_EQ(write_record(*ring, 32, 1), OutputStatus::kOk);
  EXPECT_EQ(head_of(*ring), 500u * 32);
  EXPECT_EQ(ring->pending_lost(), 0u);
}

TEST_P(RingWrites, BackwardHeadGoesDownFromZero) {
  RingConfig config;
  config.overwrite = true;
  config.backward = true;
  auto ring = make_ring(1, config);
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(write_record(*ring, 40, static_cast<std::uint8_t>(i)), OutputStatus::kOk);
  EXPECT_EQ(static_cast<std::int64_t>(head_of(*ring)), -200);
  BackwardReader reader(view_of(*ring));
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  Record r;
  for (int expect = 4; expect >= 0; --expect) {  // newest first
    ASSERT_EQ(reader.next(r), ReadStatus::kOk);
    EXPECT_EQ(r.bytes[8], expect);
  }
  EXPECT_EQ(reader.next(r), ReadStatus::kEmpty);
}

TEST_P(RingWrites, BackwardWritableRingRespectsTheTail) {
  RingConfig config;
  config.backward = true;
  auto ring = make_ring(1, config);
  int written = 0;
  while (write_record(*ring, 16, 1) == OutputStatus::kOk) ++written;
  EXPECT_EQ(written, 255);  // data_size - 1 bytes at most, as forward
  EXPECT_EQ(static_cast<std::int64_t>(head_of(*ring)), -4080);
}

TEST_P(RingWrites, PausedRingCountsDrops) {
  auto ring = make_ring(1);
  ring->set_paused(true);
  EXPECT_EQ(write_record(*ring, 32, 1), OutputStatus::kLost);
  EXPECT_EQ(head_of(*ring), 0u);
  ring->set_paused(false);
  ASSERT_EQ(write_record(*ring, 32, 1), OutputStatus::kOk);
  EXPECT_EQ(head_of(*ring), 24u + 32);  // LOST record in front of the sample
}

TEST_P(RingWrites, ControlPageOnlyRingDropsSilently) {
  auto ring = make_ring(0);
  EXPECT_EQ(write_record(*ring, 32, 1), OutputStatus::kNoDataArea);
  EXPECT_EQ(ring->pending_lost(), 0u);
}

TEST_P(RingWrites, OversizedRecordIsRefused) {
  auto ring = make_ring(1);
  OutputHandle h;
  EXPECT_EQ(h.begin(*ring, 8192, 24), OutputStatus::kLost);
  EXPECT_EQ(head_of(*ring), 0u);
}

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

TEST_P(RingWrites, DefaultWatermarkIsHalfTheBuffer) {
  auto ring = make_ring(1);
  EXPECT_EQ(ring->watermark(), 2048u);
  int records = 0;
  while (!readable(ring->wakeup_fd())) {
    ASSERT_EQ(write_record(*ring, 32, 1), OutputStatus::kOk);
    ++records;
  }
  // The stamp needs the distance to exceed 2048: the 65th record ends at 2080.
  EXPECT_EQ(records, 65);
  EXPECT_TRUE(ring->take_wakeup());
  EXPECT_FALSE(ring->take_wakeup());  // reported once
}

TEST_P(RingWrites, WatermarkIsStrictlyGreater) {
  RingConfig config;
  config.watermark = 640;
  auto ring = make_ring(1, config);
  int bytes = 0;
  while (!readable(ring->wakeup_fd())) {
    ASSERT_EQ(write_record(*ring, 32, 1), OutputStatus::kOk);
    bytes += 32;
  }
  EXPECT_EQ(bytes, 672);
}

TEST_P(RingWrites, AStampAheadOfTheWriterIsNotACrossing) {
  EXPECT_TRUE(passed_watermark(4097, 0, 4096));
  EXPECT_FALSE(passed_watermark(4096, 0, 4096));
  // Another writer reserved further and stamped first: this writer is behind the stamp.
  EXPECT_FALSE(passed_watermark(4000, 4096, 4096));
  EXPECT_FALSE(passed_watermark(0, 8192, 1));
  // Free-running positions wrap around 2^64.
  EXPECT_TRUE(passed_watermark(100, ~std::uint64_t{0} - 4000, 4096));
}

TEST_P(RingWrites, WakeupEventsCountsSamples) {
  auto ring = make_ring(4);
  for (int i = 0; i < 4; ++i) {
    OutputHandle h;
    ASSERT_EQ(h.begin(*ring, 16, 24), OutputStatus::kOk);
    h.zero(16);
    h.count_sample(5);
    h.end();
    EXPECT_FALSE(readable(ring->wakeup_fd()));
  }
  OutputHandle h;
  ASSERT_EQ(h.begin(*ring, 16, 24), OutputStatus::kOk);
  h.zero(16);
  h.count_sample(5);
  h.end();
  EXPECT_TRUE(readable(ring->wakeup_fd()));
}

TEST_P(RingWrites, HangUpReachesConsumers) {
  auto ring = make_ring(1);
  ring->hang_up();
  pollfd p{ring->wakeup_fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 0), 1);
  EXPECT_TRUE(p.revents & POLLHUP);
}

// copy_custom hands the callback contiguous pieces with their offset into the source.
std::size_t copy_and_count(void* dst, const void* src, std::size_t offset, std::size_t len) {
  std::memcpy(dst, static_cast<const std::uint8_t*>(src) + offset, len);
  return 0;
}

TEST_P(RingWrites, CustomCopySplitsAtTheEnd) {
  auto ring = make_ring(1);
  // Move the head close to the end: 125 * 32 = 4000, consumed as it goes.
  for (int i = 0; i < 125; ++i) {
    ASSERT_EQ(write_record(*ring, 32, 1), OutputStatus::kOk);
    ring->control()->data_tail = ring->control()->data_head;
  }
  std::vector<std::uint8_t> src(64);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i);
  OutputHandle h;
  ASSERT_EQ(h.begin(*ring, 64, 24), OutputStatus::kOk);
  EXPECT_EQ(h.copy_custom(copy_and_count, src.data(), src.size()), 0u);
  h.end();
  for (std::size_t i = 0; i < 64; ++i) {
    EXPECT_EQ(ring->data()[(4000 + i) & 4095], static_cast<std::uint8_t>(i));
  }
}

// copy_from_ring (a sample's AUX data, from the AUX area into the record): the pieces end where
// the source ring or the destination ring wraps, whichever comes first, and every byte lands in
// order, for each combination of the two wrapping or not.
TEST_P(RingWrites, CopyFromRingSplitsWhereEitherRingWraps) {
  std::vector<std::uint8_t> src(256);  // the source ring: 256 bytes, mask 255
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 7 + 3);
  struct Case {
    std::uint64_t dst_at;  // where the record starts in the 4096-byte ring (its data 8 bytes on)
    std::uint64_t from;    // source position (free-running: beyond 256 it wraps)
    std::size_t len;
  };
  const Case cases[] = {
      {0, 8, 200},       // neither wraps
      {0, 1000, 200},    // the source wraps (1000 & 255 = 232: 24 bytes, then 176)
      {4000, 16, 200},   // the destination wraps (88 bytes, then 112)
      {4000, 250, 256},  // both, the source first: 6, 82, 168
      {4000, 160, 200},  // both, the destination first: 88, 8, 104
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "dst " << c.dst_at << " from " << c.from);
    auto ring = make_ring(1);
    for (std::uint64_t at = 0; at < c.dst_at; at += 16) {
      ASSERT_EQ(write_record(*ring, 16, 0), OutputStatus::kOk);
      ring->control()->data_tail = ring->control()->data_head;
    }
    OutputHandle h;
    ASSERT_EQ(h.begin(*ring, static_cast<std::uint32_t>(c.len + 8), 24), OutputStatus::kOk);
    h.put(std::uint64_t{0x1122334455667788});
    h.copy_from_ring(src.data(), src.size() - 1, c.from, c.len);
    EXPECT_EQ(h.position(), c.dst_at + 8 + c.len);
    h.end();
    for (std::size_t i = 0; i < c.len; ++i) {
      ASSERT_EQ(ring->data()[(c.dst_at + 8 + i) & 4095], src[(c.from + i) & 255]) << i;
    }
  }
}

// A writer interrupted mid-record (what a signal handler does on the same thread): the inner
// record completes first, but data_head covers neither until the outer writer leaves.
TEST_P(RingWrites, OnlyTheOutermostWriterPublishes) {
  auto ring = make_ring(1);
  OutputHandle outer;
  ASSERT_EQ(outer.begin(*ring, 32, 24), OutputStatus::kOk);
  const perf_event_header header{PERF_RECORD_SAMPLE, 0, 32};
  outer.put(header);
  ASSERT_EQ(write_record(*ring, 48, 0x11), OutputStatus::kOk);  // the "interrupt"
  EXPECT_EQ(head_of(*ring), 0u) << "published over an unfinished record";
  outer.zero(24);
  outer.end();
  EXPECT_EQ(head_of(*ring), 80u);
  // Records are laid out in reservation order: the outer one first.
  Reader reader(view_of(*ring));
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  Record r;
  ASSERT_EQ(reader.next(r), ReadStatus::kOk);
  EXPECT_EQ(r.header.size, 32u);
  ASSERT_EQ(reader.next(r), ReadStatus::kOk);
  EXPECT_EQ(r.header.size, 48u);
}

INSTANTIATE_TEST_SUITE_P(Disciplines, RingWrites,
                         ::testing::Values(Discipline::kShared, Discipline::kSingleWriter),
                         [](const ::testing::TestParamInfo<Discipline>& p) {
                           return p.param == Discipline::kShared ? "Shared" : "SingleWriter";
                         });

// The discipline the tests above run under is the one asked for.
TEST(RingDiscipline, APerThreadRingIsItsThreadsUntilAnotherWrites) {
  if (!support::process_barrier_available()) GTEST_SKIP() << "no membarrier: every ring is shared";
  RingConfig config;
  config.single_writer = gettid();
  std::unique_ptr<DataRing> ring;
  ASSERT_EQ(DataRing::create(1, config, ring), 0);
  EXPECT_EQ(ring->single_writer(), gettid());
  ASSERT_EQ(write_record(*ring, 32, 1), OutputStatus::kOk);
  EXPECT_EQ(ring->single_writer(), gettid());
  std::thread([&] { EXPECT_EQ(write_record(*ring, 32, 2), OutputStatus::kOk); }).join();
  EXPECT_EQ(ring->single_writer(), 0);
  ASSERT_EQ(write_record(*ring, 32, 3), OutputStatus::kOk);
  EXPECT_EQ(head_of(*ring), 96u);
  std::unique_ptr<DataRing> shared;
  ASSERT_EQ(DataRing::create(1, {}, shared), 0);
  EXPECT_EQ(shared->single_writer(), 0);
}

}  // namespace
}  // namespace userperf::ring
