// Ring-buffer protocol, kernel vs userperf (kernel-perf-spec §1.3–1.6, kernel-oracle.md §2–3):
// capacity and LOST accounting of a writable ring, overwrite rings (backward and forward),
// PAUSE_OUTPUT, and records wrapping across the end of the data area.
//
// Records are made large with a STACK_USER dump so that a one-page ring fills after a few samples:
// userperf samples at most once per 4 ms scheduler tick.
#include <unistd.h>

#include <string>
#include <vector>

#include "conformance/kernel_support.hpp"

namespace userperf::conformance {
namespace {

constexpr std::uint64_t kIdFields =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_CPU;

// 8 header + 56 (IDENTIFIER IP TID TIME ID CPU PERIOD) + 8 size + 944 stack + 8 dyn_size.
constexpr std::uint64_t kLostTestRecord = 1024;
perf_event_attr lost_test_attr(bool sample_id_all) {
  perf_event_attr attr =
      clock_attr(kIdFields | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD | PERF_SAMPLE_STACK_USER);
  attr.sample_stack_user = kLostTestRecord - 80;
  attr.read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
  attr.sample_id_all = sample_id_all;
  return attr;
}

// 8 header + 24 (IP TID TIME) + 8 size + 424 stack + 8 dyn_size: does not divide 4096.
constexpr std::uint64_t kOddRecord = 472;
perf_event_attr odd_record_attr() {
  perf_event_attr attr =
      clock_attr(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_STACK_USER);
  attr.sample_stack_user = kOddRecord - 48;
  attr.read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
  return attr;
}

// read() of an event with read_format ID|LOST: {value, id, lost}.
std::uint64_t lost_count(const Perf& perf, const Event& e) {
  const std::vector<std::uint64_t> words = perf.read_words(e.fd());
  EXPECT_EQ(words.size(), 3u);
  return words.size() == 3 ? words[2] : 0;
}

class RingProtocol : public TargetTest {};

// A writable ring never consumed: at most data_size - 1 bytes are outstanding, so three 1024-byte
// records fit in 4096 bytes and the fourth is lost. Once the reader frees space, the next output is
// preceded by exactly one LOST record carrying the whole count (24 bytes, + the sample_id trailer).
TEST_P(RingProtocol, LostRecordAfterTheRingFills) {
  for (const bool id_all : {false, true}) {
    SCOPED_TRACE(id_all ? "sample_id_all=1" : "sample_id_all=0");
    const perf_event_attr attr = lost_test_attr(id_all);
    Event e(perf(), attr);
    ASSERT_TRUE(e.ok()) << strerror(e.error());
    Ring ring(perf(), e.fd(), 1);
    ASSERT_TRUE(ring.ok()) << strerror(ring.error());

    ASSERT_EQ(e.enable(), 0);
    EXPECT_TRUE(burn_until([&] { return lost_count(perf(), e) >= 2; }, 3000));
    ASSERT_EQ(e.disable(), 0);
    const std::uint64_t head = ring.head();
    EXPECT_LE(head, ring.data_size() - 1);
    EXPECT_EQ(head % kLostTestRecord, 0u);
    EXPECT_EQ(head, 3 * kLostTestRecord);
    const std::uint64_t lost = lost_count(perf(), e);
    EXPECT_GE(lost, 2u);

    const std::vector<Rec> first = ring.drain();
    EXPECT_EQ(of_type(first, PERF_RECORD_SAMPLE).size(), 3u);
    EXPECT_EQ(first.size(), 3u);

    // Nothing is written at the time of the drop, nor when space frees up.
    burn_ms(5);
    EXPECT_EQ(ring.head(), head);

    ASSERT_EQ(e.enable(), 0);
    EXPECT_TRUE(burn_until([&] { return ring.head() != head; }, 2000));
    ASSERT_EQ(e.disable(), 0);
    const std::vector<Rec> after = ring.drain();
    ASSERT_GE(after.size(), 2u);
    const Rec& lost_rec = after.front();
    ASSERT_EQ(lost_rec.type(), PERF_RECORD_LOST);
    EXPECT_EQ(lost_rec.header().misc, 0);
    EXPECT_EQ(lost_rec.header().size, id_all ? 64u : 24u);
    EXPECT_EQ(lost_rec.at<std::uint64_t>(8), e.id());
    EXPECT_EQ(lost_rec.at<std::uint64_t>(16), lost);
    EXPECT_EQ(of_type(after, PERF_RECORD_LOST).size(), 1u);
    EXPECT_EQ(of_type(after, PERF_RECORD_SAMPLE).size(), after.size() - 1);
    if (id_all) {
      abi::ParsedSampleId id;
      const abi::ParseStatus st = abi::parse_sample_id(lost_rec.bytes, attr.sample_type, id);
      ASSERT_TRUE(st.ok()) << abi::to_string(st.error);
      EXPECT_EQ(id.offset, 24u);
      EXPECT_EQ(id.pid, static_cast<std::uint32_t>(getpid()));
      EXPECT_EQ(id.tid, static_cast<std::uint32_t>(this_tid()));
      EXPECT_EQ(id.id, e.id());
      EXPECT_EQ(id.identifier, e.id());
      EXPECT_EQ(id.cpu_reserved, 0u);
    }
    // No drop since: read()'s LOST still equals the record's count.
    EXPECT_EQ(lost_count(perf(), e), lost);
  }
}

// Records straddle the end of the data area with no padding; head and tail are 64-bit positions
// that keep growing.
TEST_P(RingProtocol, RecordsWrapWithoutPadding) {
  const perf_event_attr attr = odd_record_attr();
  Event e(perf(), attr);
  ASSERT_TRUE(e.ok()) << strerror(e.error());
  Ring ring(perf(), e.fd(), 1);
  ASSERT_TRUE(ring.ok());
  std::vector<Rec> records;
  ASSERT_EQ(e.enable(), 0);
  EXPECT_TRUE(burn_until(
      [&] {
        for (Rec& r : ring.drain()) records.push_back(std::move(r));
        return ring.tail() > 2 * ring.data_size();
      },
      3000));
  ASSERT_EQ(e.disable(), 0);
  for (Rec& r : ring.drain()) records.push_back(std::move(r));
  EXPECT_EQ(ring.tail(), ring.head());
  EXPECT_EQ(ring.head(), records.size() * kOddRecord);
  for (const Rec& r : records) {
    ASSERT_EQ(r.type(), PERF_RECORD_SAMPLE);
    abi::ParsedSample s;
    ASSERT_TRUE(parse(r, attr, s));
    EXPECT_EQ(s.tid, static_cast<std::uint32_t>(this_tid()));
    EXPECT_EQ(s.stack_size, attr.sample_stack_user);
  }
  EXPECT_EQ(lost_count(perf(), e), 0u);
}

// write_backward on a read-only mapping: data_head moves down from 0, the newest record starts at
// it, and a newest-first walk gives non-increasing times. Once wrapped, the walk ends before the
// partly overwritten oldest record.
TEST_P(RingProtocol, BackwardOverwriteRing) {
  perf_event_attr attr = odd_record_attr();
  attr.write_backward = 1;
  Event e(perf(), attr);
  ASSERT_TRUE(e.ok()) << strerror(e.error());
  Ring ring(perf(), e.fd(), 1, PROT_READ);
  ASSERT_TRUE(ring.ok()) << strerror(ring.error());
  auto written = [&] { return -static_cast<std::int64_t>(ring.head()); };

  auto walk = [&](std::size_t expected_records) {
    ring::BackwardReader reader(ring.view());
    ASSERT_EQ(reader.begin(), ring::ReadStatus::kOk);
    ring::Record r;
    std::uint64_t last_time = ~0ULL;
    std::size_t n = 0;
    ring::ReadStatus st;
    while ((st = reader.next(r)) == ring::ReadStatus::kOk) {
      const Rec rec{{r.bytes.begin(), r.bytes.end()}};
      abi::ParsedSample s;
      ASSERT_TRUE(parse(rec, attr, s));
      EXPECT_LE(s.time, last_time) << "record " << n;
      last_time = s.time;
      ++n;
    }
    EXPECT_EQ(st, ring::ReadStatus::kEmpty);
    EXPECT_EQ(n, expected_records);
  };

  ASSERT_EQ(e.enable(), 0);
  EXPECT_TRUE(
      burn_until([&] { return written() >= 3 * static_cast<std::int64_t>(kOddRecord); }, 3000));
  // Disabling (rather than pausing) keeps the walk free of LOST records.
  ASSERT_EQ(e.disable(), 0);
  EXPECT_LT(static_cast<std::int64_t>(ring.head()), 0);
  EXPECT_EQ(written() % static_cast<std::int64_t>(kOddRecord), 0);
  EXPECT_EQ(ring.tail(), 0u);
  walk(static_cast<std::size_t>(written()) / kOddRecord);

  ASSERT_EQ(e.enable(), 0);
  EXPECT_TRUE(burn_until(
      [&] { return written() > static_cast<std::int64_t>(ring.data_size() + 2 * kOddRecord); },
      3000));
  ASSERT_EQ(e.disable(), 0);
  // 8 whole records (3776 bytes) fit in 4096; the 9th is partly overwritten.
  walk(ring.data_size() / kOddRecord);
  EXPECT_EQ(lost_count(perf(), e), 0u);
}

// Walks a backward ring newest first from data_head up to `previous_head`.
std::vector<Rec> walk_backward(const Ring& ring, std::uint64_t previous_head) {
  std::vector<Rec> out;
  ring::BackwardReader reader(ring.view(), previous_head);
  EXPECT_EQ(reader.begin(), ring::ReadStatus::kOk);
  ring::Record r;
  ring::ReadStatus st;
  while ((st = reader.next(r)) == ring::ReadStatus::kOk) {
    out.push_back(Rec{{r.bytes.begin(), r.bytes.end()}});
  }
  EXPECT_EQ(st, ring::ReadStatus::kEmpty);
  return out;
}

// write_backward on a writable mapping honours data_tail like a forward ring (at most
// data_size - 1 bytes outstanding). After the reader frees space, the first reservation holds the
// LOST record at its lower address, i.e. the LOST comes just before the first sample after the gap
// in a newest-first walk.
TEST_P(RingProtocol, BackwardWritableRingHonoursTail) {
  perf_event_attr attr = odd_record_attr();
  attr.write_backward = 1;
  Event e(perf(), attr);
  ASSERT_TRUE(e.ok()) << strerror(e.error());
  Ring ring(perf(), e.fd(), 1);
  ASSERT_TRUE(ring.ok()) << strerror(ring.error());
  ASSERT_EQ(e.enable(), 0);
  EXPECT_TRUE(burn_until([&] { return lost_count(perf(), e) >= 2; }, 3000));
  ASSERT_EQ(e.disable(), 0);
  const std::uint64_t full = ring.head();
  EXPECT_EQ(-full, 8 * kOddRecord);  // 3776 of 4096 bytes: a 9th record would leave < 1 free byte
  EXPECT_EQ(walk_backward(ring, 0).size(), 8u);
  const std::uint64_t lost = lost_count(perf(), e);

  ring.set_tail(full);
  ASSERT_EQ(e.enable(), 0);
  EXPECT_TRUE(burn_until([&] { return ring.head() != full; }, 2000));
  ASSERT_EQ(e.disable(), 0);
  const std::vector<Rec> fresh = walk_backward(ring, full);
  ASSERT_GE(fresh.size(), 2u);
  EXPECT_EQ(fresh.back().type(), PERF_RECORD_SAMPLE);
  const Rec& lost_rec = fresh[fresh.size() - 2];
  ASSERT_EQ(lost_rec.type(), PERF_RECORD_LOST);
  EXPECT_EQ(lost_rec.at<std::uint64_t>(8), e.id());
  EXPECT_EQ(lost_rec.at<std::uint64_t>(16), lost);
  EXPECT_EQ(of_type(fresh, PERF_RECORD_LOST).size(), 1u);
}

// Pausing an overwrite ring drops and counts samples too; the first reservation after resuming
// carries the LOST record (newest first: LOST, then the sample written with it).
TEST_P(RingProtocol, PauseOnBackwardOverwriteRing) {
  perf_event_attr attr = odd_record_attr();
  attr.write_backward = 1;
  Event e(perf(), attr);
  ASSERT_TRUE(e.ok()) << strerror(e.error());
  Ring ring(perf(), e.fd(), 1, PROT_READ);
  ASSERT_TRUE(ring.ok()) << strerror(ring.error());
  ASSERT_EQ(e.enable(), 0);
  EXPECT_TRUE(burn_until([&] { return ring.head() != 0; }, 2000));
  ASSERT_EQ(e.ioctl(PERF_EVENT_IOC_PAUSE_OUTPUT, 1), 0);
  const std::uint64_t frozen = ring.head();
  EXPECT_TRUE(burn_until([&] { return lost_count(perf(), e) >= 2; }, 2000));
  EXPECT_EQ(ring.head(), frozen);
  ASSERT_EQ(e.ioctl(PERF_EVENT_IOC_PAUSE_OUTPUT, 0), 0);
  EXPECT_TRUE(burn_until([&] { return ring.head() != frozen; }, 2000));
  ASSERT_EQ(e.disable(), 0);
  const std::uint64_t lost = lost_count(perf(), e);
  const std::vector<Rec> fresh = walk_backward(ring, frozen);
  ASSERT_GE(fresh.size(), 2u);
  EXPECT_EQ(fresh.back().type(), PERF_RECORD_SAMPLE);
  ASSERT_EQ(fresh[fresh.size() - 2].type(), PERF_RECORD_LOST);
  EXPECT_EQ(fresh[fresh.size() - 2].at<std::uint64_t>(16), lost);
}

// Forward writing on a read-only mapping overwrites old data: data_head runs past data_size, no
// loss is counted, data_tail is ignored.
TEST_P(RingProtocol, ForwardOverwriteRing) {
  const perf_event_attr attr = odd_record_attr();
  Event e(perf(), attr);
  ASSERT_TRUE(e.ok()) << strerror(e.error());
  Ring ring(perf(), e.fd(), 1, PROT_READ);
  ASSERT_TRUE(ring.ok()) << strerror(ring.error());
  ASSERT_EQ(e.enable(), 0);
  EXPECT_TRUE(burn_until([&] { return ring.head() > ring.data_size() + kOddRecord; }, 3000));
  ASSERT_EQ(e.disable(), 0);
  EXPECT_GT(ring.head(), ring.data_size());
  EXPECT_EQ(ring.head() % kOddRecord, 0u);
  EXPECT_EQ(ring.tail(), 0u);
  EXPECT_EQ(lost_count(perf(), e), 0u);
  ring::ForwardOverwriteReader reader(ring.view());
  EXPECT_EQ(reader.begin(), ring::ReadStatus::kOverrun);
}

// PAUSE_OUTPUT(1) freezes data_head while drops are counted; after PAUSE_OUTPUT(0) the first
// record is one LOST with the whole count.
TEST_P(RingProtocol, PauseOutput) {
  perf_event_attr attr = clock_attr(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
  attr.read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
  Event e(perf(), attr);
  ASSERT_TRUE(e.ok()) << strerror(e.error());
  Ring ring(perf(), e.fd(), 2);
  ASSERT_TRUE(ring.ok());
  ASSERT_EQ(e.enable(), 0);
  EXPECT_TRUE(burn_until([&] { return ring.head() >= 2 * 32; }, 2000));
  ASSERT_EQ(e.ioctl(PERF_EVENT_IOC_PAUSE_OUTPUT, 1), 0);
  const std::uint64_t frozen = ring.head();
  EXPECT_TRUE(burn_until([&] { return lost_count(perf(), e) >= 3; }, 2000));
  EXPECT_EQ(ring.head(), frozen);
  ASSERT_EQ(e.ioctl(PERF_EVENT_IOC_PAUSE_OUTPUT, 0), 0);
  EXPECT_TRUE(burn_until([&] { return ring.head() != frozen; }, 2000));
  ASSERT_EQ(e.disable(), 0);
  const std::uint64_t lost = lost_count(perf(), e);

  const std::vector<Rec> records = ring.drain();
  std::uint64_t pos = 0;
  std::size_t i = 0;
  while (i < records.size() && pos < frozen) pos += records[i++].header().size;
  ASSERT_EQ(pos, frozen);
  ASSERT_LT(i, records.size());
  const Rec& lost_rec = records[i];
  ASSERT_EQ(lost_rec.type(), PERF_RECORD_LOST);
  EXPECT_EQ(lost_rec.header().size, 24u);
  EXPECT_EQ(lost_rec.at<std::uint64_t>(8), e.id());
  EXPECT_EQ(lost_rec.at<std::uint64_t>(16), lost);
  EXPECT_EQ(of_type(records, PERF_RECORD_LOST).size(), 1u);
}

// PAUSE_OUTPUT needs a buffer with data pages.
TEST_P(RingProtocol, PauseOutputNeedsDataPages) {
  const perf_event_attr attr = clock_attr(PERF_SAMPLE_IP);
  Event e(perf(), attr);
  ASSERT_TRUE(e.ok()) << strerror(e.error());
  EXPECT_EQ(e.ioctl(PERF_EVENT_IOC_PAUSE_OUTPUT, 1), -EINVAL);
  {
    Ring control_only(perf(), e.fd(), 0);
    ASSERT_TRUE(control_only.ok()) << strerror(control_only.error());
    EXPECT_EQ(control_only.data_size(), 0u);
    EXPECT_EQ(e.ioctl(PERF_EVENT_IOC_PAUSE_OUTPUT, 1), -EINVAL);
  }
  Ring ring(perf(), e.fd(), 1);
  ASSERT_TRUE(ring.ok());
  EXPECT_EQ(e.ioctl(PERF_EVENT_IOC_PAUSE_OUTPUT, 1), 0);
  EXPECT_EQ(e.ioctl(PERF_EVENT_IOC_PAUSE_OUTPUT, 0), 0);
}

CONFORMANCE_TARGETS(RingProtocol);

}  // namespace
}  // namespace userperf::conformance
