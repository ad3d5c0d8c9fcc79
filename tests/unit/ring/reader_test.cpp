#include "ring/reader.hpp"

#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace userperf::ring {
namespace {

constexpr std::size_t kPage = 4096;

// A ring built by hand in test memory, so the reader is tested without any producer code. The
// allocation is exactly the mapping length: ASan flags any read past the mapping.
class FakeRing {
 public:
  explicit FakeRing(std::uint64_t data_size, std::size_t control_size = kPage)
      : length_(control_size + data_size),
        data_offset_(control_size),
        data_size_(data_size),
        mem_(static_cast<std::uint8_t*>(::operator new(length_, kAlign))) {
    std::memset(mem_, 0, length_);
    control()->data_offset = control_size;
    control()->data_size = data_size;
  }
  ~FakeRing() { ::operator delete(mem_, kAlign); }
  FakeRing(const FakeRing&) = delete;
  FakeRing& operator=(const FakeRing&) = delete;

  std::uint8_t* base() { return mem_; }
  std::size_t length() const { return length_; }
  perf_event_mmap_page* control() { return reinterpret_cast<perf_event_mmap_page*>(mem_); }
  const std::uint8_t* data() const { return mem_ + data_offset_; }
  std::uint64_t data_size() const { return data_size_; }

  RingView view() {
    RingView v;
    EXPECT_EQ(make_ring_view(mem_, length_, v), ReadStatus::kOk);
    return v;
  }

  // Writes like the producer: byte p of the stream lands at data + (p & (data_size - 1)).
  void write(std::uint64_t pos, const std::vector<std::uint8_t>& bytes) {
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      mem_[data_offset_ + ((pos + i) & (data_size_ - 1))] = bytes[i];
    }
  }
  // A forward producer: the record goes at data_head, which then moves past it.
  std::uint64_t append(const std::vector<std::uint8_t>& record) {
    const std::uint64_t pos = control()->data_head;
    write(pos, record);
    control()->data_head = pos + record.size();
    return pos;
  }
  // A write_backward producer: data_head moves down by the record and the record starts there.
  std::uint64_t append_backward(const std::vector<std::uint8_t>& record) {
    const std::uint64_t pos = control()->data_head - record.size();
    write(pos, record);
    control()->data_head = pos;
    return pos;
  }
  bool in_data_area(std::span<const std::uint8_t> bytes) const {
    return bytes.data() >= data() && bytes.data() + bytes.size() <= data() + data_size_;
  }

 private:
  static constexpr std::align_val_t kAlign{64};
  std::size_t length_;
  std::size_t data_offset_;
  std::uint64_t data_size_;
  std::uint8_t* mem_;
};

// A record of `size` bytes whose body counts up from `seq`, so records differ and the first body
// byte identifies the record (like a timestamp would).
std::vector<std::uint8_t> make_record(std::uint32_t type, std::uint16_t size, std::uint8_t seq) {
  std::vector<std::uint8_t> bytes(size);
  const perf_event_header header{type, 0, size};
  std::memcpy(bytes.data(), &header, sizeof header);
  for (std::size_t i = sizeof header; i < size; ++i) {
    bytes[i] = static_cast<std::uint8_t>(seq + i - sizeof header);
  }
  return bytes;
}

std::vector<std::uint8_t> sample(std::uint16_t size, std::uint8_t seq) {
  return make_record(PERF_RECORD_SAMPLE, size, seq);
}

std::vector<std::uint8_t> lost_record(std::uint64_t id, std::uint64_t lost) {
  std::vector<std::uint8_t> bytes = make_record(PERF_RECORD_LOST, 24, 0);
  std::memcpy(bytes.data() + 8, &id, sizeof id);
  std::memcpy(bytes.data() + 16, &lost, sizeof lost);
  return bytes;
}

void set_size(FakeRing& ring, std::uint64_t pos, std::uint16_t size) {
  std::vector<std::uint8_t> field(sizeof size);
  std::memcpy(field.data(), &size, sizeof size);
  ring.write(pos + offsetof(perf_event_header, size), field);
}

// A record copied out of the reader, since Record::bytes may point into the reader's buffer.
struct Got {
  perf_event_header header;
  std::vector<std::uint8_t> bytes;
  std::uint64_t position;
};

template <class R>
ReadStatus drain(R& reader, std::vector<Got>& got) {
  Record r;
  ReadStatus status;
  while ((status = reader.next(r)) == ReadStatus::kOk) {
    got.push_back(Got{r.header, {r.bytes.begin(), r.bytes.end()}, r.position});
  }
  return status;
}

// Parameterized cases carry a `what` that names them.
template <class Case>
std::string case_name(const ::testing::TestParamInfo<Case>& c) {
  return c.param.what;
}

TEST(ReadStatus, HasNames) {
  EXPECT_STREQ(to_string(ReadStatus::kOk), "ok");
  EXPECT_STREQ(to_string(ReadStatus::kEmpty), "empty");
  EXPECT_STRNE(to_string(ReadStatus::kBadHead), to_string(ReadStatus::kBadSize));
  EXPECT_STRNE(to_string(ReadStatus::kBadControlPage), to_string(ReadStatus::kOverrun));
}

TEST(RingView, TakesTheKernelLayout) {
  FakeRing ring(2 * kPage);
  RingView v;
  ASSERT_EQ(make_ring_view(ring.base(), ring.length(), v), ReadStatus::kOk);
  EXPECT_EQ(v.control, ring.control());
  EXPECT_EQ(v.data, ring.base() + kPage);
  EXPECT_EQ(v.data_size, 2 * kPage);
}

struct BogusControl {
  const char* what;
  std::uint64_t data_offset;
  std::uint64_t data_size;
};

class RingViewRejects : public ::testing::TestWithParam<BogusControl> {};

TEST_P(RingViewRejects, BogusControlPage) {
  FakeRing ring(2 * kPage);
  ring.control()->data_offset = GetParam().data_offset;
  ring.control()->data_size = GetParam().data_size;
  RingView v;
  EXPECT_EQ(make_ring_view(ring.base(), ring.length(), v), ReadStatus::kBadControlPage);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RingViewRejects,
    ::testing::Values(BogusControl{"offset_past_mapping", 4 * kPage, kPage},
                      BogusControl{"offset_past_mapping_size_0", 4 * kPage, 0},
                      BogusControl{"size_larger_than_mapping", kPage, 4 * kPage},
                      BogusControl{"size_not_power_of_two", kPage, 3 * kPage / 2},
                      BogusControl{"size_below_a_header", kPage, 4},
                      BogusControl{"offset_over_control_page", 0, 2 * kPage},
                      BogusControl{"offset_unaligned", kPage + 4, kPage},
                      BogusControl{"offset_plus_size_overflows", ~std::uint64_t{0} - kPage + 1,
                                   2 * kPage}),
    case_name<BogusControl>);

TEST(RingView, RejectsAMappingTooShortOrMisplaced) {
  FakeRing ring(0);
  RingView v;
  EXPECT_EQ(make_ring_view(nullptr, ring.length(), v), ReadStatus::kBadControlPage);
  EXPECT_EQ(make_ring_view(ring.base(), sizeof(perf_event_mmap_page) - 8, v),
            ReadStatus::kBadControlPage);
  EXPECT_EQ(make_ring_view(ring.base() + 4, ring.length() - 4, v), ReadStatus::kBadControlPage);
}

TEST(RingView, ControlPageOnlyMappingIsAlwaysEmpty) {
  FakeRing ring(0);
  ring.control()->data_head = 4096;  // nonsense, but there is nothing to read anyway
  ring.control()->data_tail = 77;
  const RingView v = ring.view();
  EXPECT_EQ(v.data_size, 0u);
  Record r;
  Reader reader(v);
  EXPECT_EQ(reader.begin(), ReadStatus::kOk);
  EXPECT_EQ(reader.next(r), ReadStatus::kEmpty);
  reader.commit();
  EXPECT_EQ(ring.control()->data_tail, 77u);
  ForwardOverwriteReader forward(v);
  EXPECT_EQ(forward.begin(), ReadStatus::kOk);
  EXPECT_EQ(forward.next(r), ReadStatus::kEmpty);
  BackwardReader backward(v);
  EXPECT_EQ(backward.begin(), ReadStatus::kOk);
  EXPECT_EQ(backward.next(r), ReadStatus::kEmpty);
}

TEST(Reader, EmptyRing) {
  FakeRing ring(kPage);
  Reader reader(ring.view());
  Record r;
  EXPECT_EQ(reader.next(r), ReadStatus::kEmpty);  // before begin(): nothing snapshotted
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  EXPECT_EQ(reader.next(r), ReadStatus::kEmpty);
  EXPECT_EQ(reader.records(), 0u);
  EXPECT_EQ(reader.lost(), 0u);
}

TEST(Reader, ReadsRecordsInOrderInPlace) {
  FakeRing ring(kPage);
  const std::vector<std::vector<std::uint8_t>> records = {
      make_record(PERF_RECORD_SWITCH, 8, 0), sample(32, 1), make_record(PERF_RECORD_COMM, 64, 2)};
  for (const auto& rec : records) ring.append(rec);

  Reader reader(ring.view());
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  std::uint64_t pos = 0;
  for (const auto& rec : records) {
    Record r;
    ASSERT_EQ(reader.next(r), ReadStatus::kOk);
    EXPECT_EQ(r.position, pos);
    EXPECT_EQ(r.header.size, rec.size());
    EXPECT_EQ(std::vector<std::uint8_t>(r.bytes.begin(), r.bytes.end()), rec);
    EXPECT_EQ(r.bytes.data(), ring.data() + pos);  // no copy when the record does not wrap
    pos += rec.size();
  }
  Record r;
  EXPECT_EQ(reader.next(r), ReadStatus::kEmpty);
  EXPECT_EQ(reader.next(r), ReadStatus::kEmpty);
  EXPECT_EQ(reader.records(), 3u);
}

TEST(Reader, RecordStraddlingTheEndIsContiguous) {
  FakeRing ring(kPage);
  // Positions are free-running: start a few laps in, 16 bytes before the end of the area.
  const std::uint64_t start = 3 * kPage - 16;
  ring.control()->data_head = ring.control()->data_tail = start;
  const auto wrapping = sample(40, 1);
  ring.append(wrapping);
  ring.append(sample(16, 2));

  Reader reader(ring.view());
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  Record r;
  ASSERT_EQ(reader.next(r), ReadStatus::kOk);
  EXPECT_EQ(r.position, start);
  EXPECT_EQ(std::vector<std::uint8_t>(r.bytes.begin(), r.bytes.end()), wrapping);
  EXPECT_FALSE(ring.in_data_area(r.bytes));
  ASSERT_EQ(reader.next(r), ReadStatus::kOk);
  EXPECT_EQ(r.position, start + 40);
  EXPECT_EQ(r.bytes.data(), ring.data() + 24);
  EXPECT_EQ(reader.next(r), ReadStatus::kEmpty);
  reader.commit();

  // A record whose header is the last 8 bytes of the area.
  ring.append(sample(kPage - 32 - 16, 3));
  const auto header_at_end = sample(24, 4);
  ASSERT_EQ(ring.append(header_at_end) % kPage, kPage - 8);
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  ASSERT_EQ(reader.next(r), ReadStatus::kOk);
  ASSERT_EQ(reader.next(r), ReadStatus::kOk);
  EXPECT_EQ(std::vector<std::uint8_t>(r.bytes.begin(), r.bytes.end()), header_at_end);
  EXPECT_EQ(reader.next(r), ReadStatus::kEmpty);
  EXPECT_EQ(reader.records(), 4u);
}

TEST(Reader, SumsLostRecords) {
  FakeRing ring(kPage);
  // The first LOST wraps with its 'lost' field past the end of the area.
  ring.control()->data_head = ring.control()->data_tail = kPage - 32;
  ring.append(sample(16, 0));
  ring.append(lost_record(42, 5));
  ring.append(lost_record(42, 7));
  ring.append(sample(48, 1));
  Reader reader(ring.view());
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  std::vector<Got> got;
  EXPECT_EQ(drain(reader, got), ReadStatus::kEmpty);
  EXPECT_EQ(got.size(), 4u);
  EXPECT_EQ(reader.lost(), 12u);
}

TEST(Reader, CommitStoresTheTailAfterTheLastRecordReturned) {
  FakeRing ring(kPage);
  ring.append(sample(8, 0));
  ring.append(sample(32, 1));
  ring.append(sample(16, 2));
  Reader reader(ring.view());
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  reader.commit();
  EXPECT_EQ(ring.control()->data_tail, 0u);
  Record r;
  ASSERT_EQ(reader.next(r), ReadStatus::kOk);
  ASSERT_EQ(reader.next(r), ReadStatus::kOk);
  reader.commit();
  EXPECT_EQ(ring.control()->data_tail, 40u);

  // A new pass starts at the published tail.
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  ASSERT_EQ(reader.next(r), ReadStatus::kOk);
  EXPECT_EQ(r.position, 40u);
  EXPECT_EQ(reader.next(r), ReadStatus::kEmpty);
  reader.commit();
  EXPECT_EQ(ring.control()->data_tail, ring.control()->data_head);
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  EXPECT_EQ(reader.next(r), ReadStatus::kEmpty);
}

struct BadSize {
  const char* what;
  std::uint16_t size;
};

class ReaderRejects : public ::testing::TestWithParam<BadSize> {};

TEST_P(ReaderRejects, CorruptRecordSize) {
  FakeRing ring(kPage);
  ring.append(sample(16, 0));
  const std::uint64_t bad = ring.append(sample(32, 1));
  set_size(ring, bad, GetParam().size);

  Reader reader(ring.view());
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  Record r;
  ASSERT_EQ(reader.next(r), ReadStatus::kOk);
  EXPECT_EQ(reader.next(r), ReadStatus::kBadSize);
  EXPECT_EQ(reader.next(r), ReadStatus::kBadSize);  // stays failed, no progress past it
  EXPECT_EQ(reader.records(), 1u);

  // Giving up on the snapshot hands all of it back to the producer.
  reader.discard();
  EXPECT_EQ(reader.next(r), ReadStatus::kEmpty);
  reader.commit();
  EXPECT_EQ(ring.control()->data_tail, ring.control()->data_head);
}

INSTANTIATE_TEST_SUITE_P(Cases, ReaderRejects,
                         ::testing::Values(BadSize{"zero", 0}, BadSize{"below_header", 4},
                                           BadSize{"not_multiple_of_8", 12},
                                           BadSize{"past_head", 40}, BadSize{"max_u16", 65535},
                                           BadSize{"max_record_past_head", 65528}),
                         case_name<BadSize>);

struct BadHead {
  const char* what;
  std::uint64_t tail;
  std::uint64_t head;
};

class ReaderRejectsHead : public ::testing::TestWithParam<BadHead> {};

TEST_P(ReaderRejectsHead, CorruptHeadOrTail) {
  FakeRing ring(kPage);
  ring.control()->data_tail = GetParam().tail;
  ring.control()->data_head = GetParam().head;
  Reader reader(ring.view());
  EXPECT_EQ(reader.begin(), ReadStatus::kBadHead);
  Record r;
  EXPECT_EQ(reader.next(r), ReadStatus::kBadHead);

  ring.control()->data_tail = ring.control()->data_head = 64;
  EXPECT_EQ(reader.begin(), ReadStatus::kOk);
  EXPECT_EQ(reader.next(r), ReadStatus::kEmpty);
}

INSTANTIATE_TEST_SUITE_P(Cases, ReaderRejectsHead,
                         ::testing::Values(BadHead{"head_behind_tail", 64, 32},
                                           BadHead{"more_than_data_size", 0, kPage + 8},
                                           BadHead{"head_unaligned", 0, 12},
                                           BadHead{"tail_unaligned", 4, 16}),
                         case_name<BadHead>);

unsigned seq_of(const Got& g) {
  return g.bytes[sizeof(perf_event_header)];
}

TEST(BackwardReader, NotWrappedReturnsNewestFirst) {
  FakeRing ring(kPage);
  for (std::uint8_t i = 0; i < 5; ++i) ring.append_backward(sample(40, i));
  EXPECT_EQ(ring.control()->data_head, static_cast<std::uint64_t>(-200));

  BackwardReader reader(ring.view());
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  std::vector<Got> got;
  EXPECT_EQ(drain(reader, got), ReadStatus::kEmpty);
  ASSERT_EQ(got.size(), 5u);
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].position, static_cast<std::uint64_t>(-200 + 40 * static_cast<int>(i)));
    EXPECT_EQ(seq_of(got[i]), 4 - i);
  }

  // The next pass stops where this one began.
  reader.commit();
  EXPECT_EQ(reader.previous_head(), static_cast<std::uint64_t>(-200));
  ring.append_backward(sample(40, 5));
  ring.append_backward(sample(24, 6));
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  got.clear();
  EXPECT_EQ(drain(reader, got), ReadStatus::kEmpty);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(seq_of(got[0]), 6u);
  EXPECT_EQ(seq_of(got[1]), 5u);
  EXPECT_EQ(reader.records(), 7u);
}

TEST(BackwardReader, WrappedDropsThePartlyOverwrittenOldestRecord) {
  // What the kernel produced here: 4096 bytes hold 102 whole 40-byte records and 16 bytes of an
  // older one (kernel-oracle §2).
  FakeRing ring(kPage);
  for (int i = 0; i < 110; ++i) ring.append_backward(sample(40, static_cast<std::uint8_t>(i)));
  BackwardReader reader(ring.view());
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  std::vector<Got> got;
  EXPECT_EQ(drain(reader, got), ReadStatus::kEmpty);
  ASSERT_EQ(got.size(), 102u);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(seq_of(got[i]), 109 - i);
}

TEST(BackwardReader, WrappedWalkStopsAtAZeroHeader) {
  // The head says the ring wrapped since previous_head, but only part of it was ever written.
  FakeRing ring(kPage);
  ring.control()->data_head = -(kPage + 64);
  const std::uint64_t head = ring.control()->data_head;
  ring.write(head, sample(40, 0));
  ring.write(head + 40, sample(16, 1));
  BackwardReader reader(ring.view());
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  std::vector<Got> got;
  EXPECT_EQ(drain(reader, got), ReadStatus::kEmpty);
  EXPECT_EQ(got.size(), 2u);
}

TEST(BackwardReader, CorruptSizeInsideTheWrittenRangeIsAnError) {
  for (const std::uint16_t size : {0, 12, 48}) {  // 48 runs past previous_head
    FakeRing ring(kPage);
    ring.append_backward(sample(40, 0));
    const std::uint64_t oldest_but_one = ring.append_backward(sample(40, 1));
    ring.append_backward(sample(40, 2));
    set_size(ring, oldest_but_one + (size == 48 ? 40 : 0), size);
    BackwardReader reader(ring.view());
    ASSERT_EQ(reader.begin(), ReadStatus::kOk);
    std::vector<Got> got;
    EXPECT_EQ(drain(reader, got), ReadStatus::kBadSize) << size;
    Record r;
    EXPECT_EQ(reader.next(r), ReadStatus::kBadSize);
  }
}

TEST(BackwardReader, HeadMovingUpOrUnalignedIsAnError) {
  FakeRing ring(kPage);
  BackwardReader reader(ring.view());
  ring.control()->data_head = 64;  // above where writing starts
  EXPECT_EQ(reader.begin(), ReadStatus::kBadHead);
  ring.control()->data_head = -12;
  EXPECT_EQ(reader.begin(), ReadStatus::kBadHead);
  Record r;
  EXPECT_EQ(reader.next(r), ReadStatus::kBadHead);
}

TEST(ForwardOverwriteReader, ReadsFromThePreviousHead) {
  FakeRing ring(kPage);
  const std::uint64_t previous = 4000;  // the records below wrap around the end of the area
  ring.control()->data_head = previous;
  std::vector<std::vector<std::uint8_t>> records;
  for (std::uint8_t i = 0; ring.control()->data_head - previous + 120 <= kPage; ++i) {
    records.push_back(sample(static_cast<std::uint16_t>(8 * (i % 15) + 8), i));
    ring.append(records.back());
  }
  ForwardOverwriteReader reader(ring.view(), previous);
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  Record r;
  ASSERT_EQ(reader.next(r), ReadStatus::kOk);
  reader.commit();
  EXPECT_EQ(reader.previous_head(), previous + records[0].size());

  std::vector<Got> got;
  EXPECT_EQ(drain(reader, got), ReadStatus::kEmpty);
  ASSERT_EQ(got.size() + 1, records.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].bytes, records[i + 1]);
  reader.commit();
  EXPECT_EQ(reader.previous_head(), ring.control()->data_head);
  EXPECT_EQ(ring.control()->data_tail, 0u);  // the control page is never written
}

TEST(ForwardOverwriteReader, ReportsOverrunInsteadOfGuessingABoundary) {
  FakeRing ring(kPage);
  for (std::size_t i = 0; i < (kPage + 200) / 8; ++i) ring.append(sample(8, 0));
  ForwardOverwriteReader reader(ring.view());
  EXPECT_EQ(reader.begin(), ReadStatus::kOverrun);
  EXPECT_EQ(reader.overrun_bytes(), 200u);
  Record r;
  EXPECT_EQ(reader.next(r), ReadStatus::kOverrun);

  // Resynchronize at the head: its end of record is the one known boundary.
  reader.discard();
  reader.commit();
  EXPECT_EQ(reader.previous_head(), ring.control()->data_head);
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  EXPECT_EQ(reader.overrun_bytes(), 0u);
  EXPECT_EQ(reader.next(r), ReadStatus::kEmpty);
  ring.append(sample(32, 1));
  ASSERT_EQ(reader.begin(), ReadStatus::kOk);
  ASSERT_EQ(reader.next(r), ReadStatus::kOk);
  EXPECT_EQ(r.header.size, 32);
}

TEST(ForwardOverwriteReader, HeadBehindThePreviousHeadIsAnError) {
  FakeRing ring(kPage);
  ring.control()->data_head = 64;
  ForwardOverwriteReader reader(ring.view(), kPage);
  EXPECT_EQ(reader.begin(), ReadStatus::kBadHead);
}

// Random control pages, heads and ring contents, and a producer scribbling between reads: any
// status is acceptable, a crash, a hang or a read outside the mapping (ASan) is not.
TEST(ReaderRobustness, RandomRings) {
  std::mt19937_64 rng(0x5eed);
  auto below = [&](std::uint64_t n) { return rng() % n; };
  auto one_in = [&](std::uint64_t n) { return below(n) == 0; };
  auto align_down = [](std::uint64_t p) { return p & ~std::uint64_t{7}; };
  constexpr std::size_t kControl = (sizeof(perf_event_mmap_page) + 7) & ~std::size_t{7};

  for (int iter = 0; iter < 20000; ++iter) {
    const std::uint64_t data_size = one_in(16) ? below(300) : std::uint64_t{8} << below(7);
    FakeRing ring(data_size, kControl);
    for (std::size_t i = 0; i < ring.length(); ++i) {
      ring.base()[i] = static_cast<std::uint8_t>(rng());
    }
    perf_event_mmap_page* page = ring.control();
    page->data_offset = one_in(16) ? below(ring.length() + 16) : kControl;
    page->data_size = one_in(16) ? rng() : data_size;
    const std::size_t length = ring.length() - (one_in(16) ? below(ring.length()) : 0);

    RingView view;
    if (make_ring_view(ring.base(), length, view) != ReadStatus::kOk) continue;
    ASSERT_LE(view.data + view.data_size, ring.base() + length);

    // Mostly well-formed chains of records from where a walk starts, so that walks go deep before
    // they meet the random bytes.
    auto plant = [&](std::uint64_t start) {
      if (view.data_size != ring.data_size() || view.data_size == 0 || one_in(4)) return;
      for (std::uint64_t pos = start; pos - start < view.data_size;) {
        const auto size = static_cast<std::uint16_t>(one_in(32) ? rng() : 8 * (1 + below(8)));
        set_size(ring, pos, size);
        pos += size >= 8 && size % 8 == 0 ? size : 8;
      }
    };
    // Up to twice the ring apart, so that overrun and wrapped walks are common too.
    auto distance = [&] { return align_down(below(2 * view.data_size + 24)); };
    auto scribble = [&] {
      if (view.data_size == 0 || !one_in(4)) return;
      const_cast<std::uint8_t*>(view.data)[below(view.data_size)] =
          static_cast<std::uint8_t>(rng());
      if (one_in(8)) page->data_head = page->data_head + 8 * below(4);
    };
    auto walk = [&](auto& reader) {
      if (reader.begin() != ReadStatus::kOk) return;
      Record r;
      for (std::uint64_t n = 0; reader.next(r) == ReadStatus::kOk; ++n) {
        ASSERT_LT(n, view.data_size / 8);
        ASSERT_EQ(r.bytes.size(), r.header.size);
        ASSERT_GE(r.header.size, 8u);
        ASSERT_EQ(r.header.size % 8, 0u);
        ASSERT_LE(r.header.size, view.data_size);
        volatile std::uint8_t last = r.bytes.back();  // the whole span must be readable
        (void)last;
        scribble();
      }
    };

    const std::uint64_t tail = one_in(8) ? rng() : align_down(rng());
    page->data_tail = tail;
    plant(tail);
    page->data_head = one_in(8) ? rng() : tail + align_down(distance() / 2);
    Reader forward(view);
    walk(forward);
    forward.commit();
    forward.discard();
    forward.commit();

    const std::uint64_t previous = one_in(8) ? rng() : align_down(rng());
    plant(previous);
    page->data_head = one_in(8) ? rng() : previous + distance();
    ForwardOverwriteReader overwrite(view, previous);
    walk(overwrite);
    overwrite.discard();
    overwrite.commit();
    walk(overwrite);

    BackwardReader backward(view, one_in(2) ? 0 : align_down(rng()));
    for (int pass = 0; pass < 2; ++pass) {
      page->data_head = one_in(8) ? rng() : backward.previous_head() - distance();
      plant(page->data_head);
      walk(backward);
      backward.commit();
    }
  }
}

}  // namespace
}  // namespace userperf::ring
