// The AUX area (kernel-perf-spec §4) and AUX sampling (§5) through the C API, with the hand-driven
// test_aux PMU as the trace source.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <memory>
#include <numeric>

#include "core/sample_output.hpp"
#include "support/aux_events.hpp"

namespace userperf {
namespace {

using testing::aux_attr;
using testing::aux_records;
using testing::aux_write;
using testing::MappedAux;
using testing::MappedRing;
using testing::page;

struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) testing::event_close(fd);
  }
  operator int() const { return fd; }
};

// Words 1, 2, 3, ... : the trace the tests write, so any window can be checked exactly.
void write_words(int fd, std::uint64_t first, std::uint64_t count) {
  for (std::uint64_t w = first; w < first + count; ++w) {
    ASSERT_EQ(aux_write(fd, &w, sizeof w), core::AuxStream::Append::kOk) << w;
  }
}

void expect_words(const std::uint8_t* bytes, std::size_t len, std::uint64_t last) {
  ASSERT_EQ(len % 8, 0u);
  const std::size_t n = len / 8;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t w;
    std::memcpy(&w, bytes + 8 * i, 8);
    ASSERT_EQ(w, last - (n - 1 - i)) << "word " << i << " of " << n;
  }
}

TEST(AuxMmap, KernelErrorsForBadGeometry) {
  perf_event_attr attr = aux_attr();
  Fd fd(testing::event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(fd, 0) << strerror(errno);
  const std::size_t p = page();
  // No data buffer yet.
  EXPECT_EQ(testing::event_mmap(nullptr, 4 * p, PROT_READ, MAP_SHARED, fd, 5 * p), MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);
  MappedRing ring(fd, 4);
  ASSERT_TRUE(ring.ok());
  auto* ctl = ring.control();
  // aux_offset / aux_size not written.
  EXPECT_EQ(testing::event_mmap(nullptr, 4 * p, PROT_READ, MAP_SHARED, fd, 5 * p), MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);
  // Overlapping the data area.
  ctl->aux_offset = 4 * p;
  ctl->aux_size = 4 * p;
  EXPECT_EQ(testing::event_mmap(nullptr, 4 * p, PROT_READ, MAP_SHARED, fd, 4 * p), MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);
  // Mapped at another offset than aux_offset.
  ctl->aux_offset = 5 * p;
  EXPECT_EQ(testing::event_mmap(nullptr, 4 * p, PROT_READ, MAP_SHARED, fd, 6 * p), MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);
  // Length other than aux_size.
  EXPECT_EQ(testing::event_mmap(nullptr, 2 * p, PROT_READ, MAP_SHARED, fd, 5 * p), MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);
  // Not a power of two.
  ctl->aux_size = 3 * p;
  EXPECT_EQ(testing::event_mmap(nullptr, 3 * p, PROT_READ, MAP_SHARED, fd, 5 * p), MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);
  // MAP_PRIVATE.
  ctl->aux_size = 4 * p;
  EXPECT_EQ(testing::event_mmap(nullptr, 4 * p, PROT_READ, MAP_PRIVATE, fd, 5 * p), MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);
  // Valid: mapped; again with the same geometry: another reference; another size: EINVAL.
  void* a = testing::event_mmap(nullptr, 4 * p, PROT_READ, MAP_SHARED, fd, 5 * p);
  ASSERT_NE(a, MAP_FAILED) << strerror(errno);
  void* b = testing::event_mmap(nullptr, 4 * p, PROT_READ, MAP_SHARED, fd, 5 * p);
  ASSERT_NE(b, MAP_FAILED) << strerror(errno);
  ctl->aux_size = 8 * p;
  EXPECT_EQ(testing::event_mmap(nullptr, 8 * p, PROT_READ, MAP_SHARED, fd, 5 * p), MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_GE(testing::event_aux_fd(fd), 0);
  EXPECT_EQ(testing::event_munmap(a, 4 * p), 0);
  EXPECT_EQ(testing::event_munmap(b, 4 * p), 0);
  EXPECT_EQ(testing::event_aux_fd(fd), -1) << "the last unmap frees the area";
  EXPECT_EQ(errno, EINVAL);
}

TEST(AuxMmap, PmuWithoutAuxIsEopnotsupp) {
  perf_event_attr attr = testing::test_attr(PERF_SAMPLE_IP);
  Fd fd(testing::event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(fd, 0);
  MappedAux m(fd, 4, 4, true);
  EXPECT_FALSE(m.ok());
  EXPECT_EQ(m.map_errno, EOPNOTSUPP);
}

TEST(AuxOverwrite, WrapsAndTheSnapshotIsTheNewestBytesExactly) {
  perf_event_attr attr = aux_attr();
  Fd fd(testing::event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(fd, 0);
  MappedAux m(fd, 4, 2, /*overwrite=*/true);
  ASSERT_TRUE(m.ok()) << strerror(m.map_errno);
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  const std::uint64_t words = 3 * m.aux_length / 8 + 5;  // wraps three times and a bit
  write_words(fd, 1, words);
  // The consumer's view while tracing runs: aux_head follows the writes.
  EXPECT_EQ(m.aux_head(), words * 8);
  std::vector<std::uint8_t> newest(4096);
  std::uint64_t head = 0;
  ASSERT_EQ(ring::copy_newest_aux(m.view(), newest.data(), newest.size(), &head), 4096u);
  EXPECT_EQ(head, words * 8);
  expect_words(newest.data(), newest.size(), words);
  // The snapshot protocol: disable, copy, re-enable.
  std::vector<std::uint8_t> snap(3 * m.aux_length);
  const ssize_t n = testing::event_aux_snapshot(fd, snap.data(), snap.size(), &head);
  ASSERT_EQ(n, static_cast<ssize_t>(m.aux_length)) << "at most the area";
  expect_words(snap.data(), static_cast<std::size_t>(n), words);
  // Re-enabled: tracing goes on.
  write_words(fd, words + 1, 1);
  EXPECT_EQ(m.aux_head(), (words + 1) * 8);
  // Overwrite mode: only records with more than OVERWRITE, or with data, are written; the
  // disable ended a handle holding data, so one record says OVERWRITE with its size.
  const auto recs = aux_records(m.ring.drain());
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].flags, std::uint64_t{PERF_AUX_FLAG_OVERWRITE});
  EXPECT_EQ(recs[0].offset, words * 8);
  EXPECT_EQ(recs[0].size, words * 8);
}

TEST(AuxOverwrite, NoRecordForAnEmptyHandle) {
  perf_event_attr attr = aux_attr();
  Fd fd(testing::event_open(&attr, 0, -1, -1, 0));
  MappedAux m(fd, 4, 2, true);
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
  EXPECT_TRUE(aux_records(m.ring.drain()).empty()) << "OVERWRITE-only records are suppressed";
}

TEST(AuxNormal, RecordsAtWatermarksAndTruncationDisablesTheEvent) {
  perf_event_attr attr = aux_attr();
  attr.aux_watermark = 4096;
  Fd fd(testing::event_open(&attr, 0, -1, -1, 0));
  MappedAux m(fd, 8, 4, /*overwrite=*/false);  // 16 KiB
  ASSERT_TRUE(m.ok()) << strerror(m.map_errno);
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  pollfd p{fd, POLLIN, 0};
  ASSERT_EQ(testing::event_poll(&p, 1, 0), 0) << "no wakeup before any data";
  write_words(fd, 1, 4096 / 8 - 1);
  EXPECT_EQ(testing::event_poll(&p, 1, 0), 0) << "below the watermark";
  write_words(fd, 4096 / 8, 1);
  ASSERT_EQ(testing::event_poll(&p, 1, 0), 1) << "the watermark was crossed";
  EXPECT_TRUE(p.revents & POLLIN);
  auto recs = aux_records(m.ring.drain());
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].offset, 0u);
  EXPECT_EQ(recs[0].size, 4096u);
  EXPECT_EQ(recs[0].flags, 0u);
  EXPECT_EQ(m.aux_head(), 4096u);
  // Fill without draining: the area takes 16 KiB - 1 byte; the next entry finds no room.
  std::uint64_t w = 4096 / 8 + 1;
  core::AuxStream::Append r = core::AuxStream::Append::kOk;
  for (; w < 10000 && r == core::AuxStream::Append::kOk; ++w) r = aux_write(fd, &w, 8);
  EXPECT_EQ(r, core::AuxStream::Append::kFull);
  EXPECT_EQ(w - 1, m.aux_length / 8) << "the last 8 bytes did not fit under the 1-byte gap";
  recs = aux_records(m.ring.drain());
  ASSERT_FALSE(recs.empty());
  EXPECT_EQ(recs.back().flags, std::uint64_t{PERF_AUX_FLAG_TRUNCATED});
  EXPECT_EQ(aux_write(fd, &w, 8), core::AuxStream::Append::kStopped) << "disabled";
  // Drain (aux_tail) and re-enable: tracing resumes where it stopped.
  std::vector<std::uint8_t> buf(m.aux_length);
  const std::uint64_t got = ring::consume_aux(m.view(), m.ring.control(), buf.data(), buf.size());
  EXPECT_EQ(got, m.aux_length - 8);
  expect_words(buf.data(), got, m.aux_length / 8 - 1);
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  EXPECT_EQ(aux_write(fd, &w, 8), core::AuxStream::Append::kOk);
}

TEST(AuxNormal, DroppedEntriesMarkTheNextRecordPartial) {
  perf_event_attr attr = aux_attr();
  Fd fd(testing::event_open(&attr, 0, -1, -1, 0));
  MappedAux m(fd, 8, 1, /*overwrite=*/false);
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  std::vector<std::uint8_t> big(m.aux_length, 0x5a);
  EXPECT_EQ(aux_write(fd, big.data(), big.size()), core::AuxStream::Append::kTooBig);
  write_words(fd, 1, 4);
  testing::aux_flush(fd);
  const auto recs = aux_records(m.ring.drain());
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].size, 32u);
  EXPECT_EQ(recs[0].flags, std::uint64_t{PERF_AUX_FLAG_PARTIAL}) << "an entry was dropped";
}

// The driver API itself, as a PMU driver would call it: skip, flags, end.
TEST(AuxOutput, SkipFlagAndEndAsTheKernel) {
  perf_event_attr attr = aux_attr();
  Fd fd(testing::event_open(&attr, 0, -1, -1, 0));  // disabled: its source holds no handle
  MappedAux m(fd, 4, 1, /*overwrite=*/false);
  ASSERT_TRUE(m.ok());
  core::Event* event = testing::engine().event(fd);
  ASSERT_NE(event, nullptr);
  core::AuxOutput h;
  ASSERT_TRUE(h.begin(*event));
  EXPECT_EQ(h.size(), m.aux_length - 1) << "CIRC_SPACE keeps one byte free";
  core::AuxOutput nested;
  EXPECT_FALSE(nested.begin(*event)) << "AUX writers do not nest";
  EXPECT_EQ(h.skip(m.aux_length), -ENOSPC);
  EXPECT_EQ(h.skip(64), 0);
  EXPECT_EQ(m.aux_head(), 64u) << "a skip publishes aux_head without a record";
  const std::uint64_t word = 42;
  ASSERT_TRUE(h.write(&word, sizeof word));
  h.flag(PERF_AUX_FLAG_OVERWRITE | PERF_AUX_FLAG_COLLISION);
  EXPECT_EQ(h.flags(), std::uint64_t{PERF_AUX_FLAG_COLLISION}) << "OVERWRITE is refused";
  h.end(h.written());
  EXPECT_EQ(m.aux_head(), 72u);
  const auto recs = aux_records(m.ring.drain());
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].offset, 64u);
  EXPECT_EQ(recs[0].size, 8u);
  EXPECT_EQ(recs[0].flags, std::uint64_t{PERF_AUX_FLAG_COLLISION});
  // Overwrite mode: the handle has no size (the driver wraps freely), so a skip cannot fit.
  Fd ofd(testing::event_open(&attr, 0, -1, -1, 0));
  MappedAux om(ofd, 4, 1, /*overwrite=*/true);
  ASSERT_TRUE(om.ok());
  core::AuxOutput oh;
  ASSERT_TRUE(oh.begin(*testing::engine().event(ofd)));
  EXPECT_EQ(oh.size(), 0u);
  EXPECT_EQ(oh.skip(8), -ENOSPC);
  oh.end(0);
  EXPECT_TRUE(aux_records(om.ring.drain()).empty()) << "OVERWRITE alone, size 0: no record";
}

TEST(AuxNormal, ItraceStartPrecedesTheTrace) {
  perf_event_attr attr = aux_attr();
  Fd fd(testing::event_open(&attr, 0, -1, -1, 0));
  MappedAux m(fd, 4, 2, true);
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  const auto recs = m.ring.drain();
  int itrace = 0;
  for (const auto& r : recs) {
    if (testing::record_type(r) != PERF_RECORD_ITRACE_START) continue;
    ++itrace;
    EXPECT_EQ(testing::field_at<std::uint32_t>(r, 8), static_cast<std::uint32_t>(getpid()));
    EXPECT_EQ(testing::field_at<std::uint32_t>(r, 12), static_cast<std::uint32_t>(gettid()));
  }
  EXPECT_EQ(itrace, 1) << "once, when tracing first starts";
}

// The pid of an AUX record's sample_id is the writer's process: a fork child's records carry its
// own, not the one the parent's first record found (a cached getpid() never reset).
TEST(AuxNormal, ForkChildsRecordsCarryItsOwnPid) {
  perf_event_attr attr = aux_attr();
  Fd fd(testing::event_open(&attr, 0, -1, -1, 0));
  MappedAux m(fd, 4, 2, /*overwrite=*/false);
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  const auto aux_pids = [&] {
    std::vector<std::uint32_t> pids;
    for (const auto& r : m.ring.drain()) {
      if (testing::record_type(r) == PERF_RECORD_AUX) {
        pids.push_back(testing::field_at<std::uint32_t>(r, 32));  // sample_id: pid, tid
      }
    }
    return pids;
  };
  write_words(fd, 1, 4);
  testing::aux_flush(fd);
  ASSERT_EQ(aux_pids(), std::vector<std::uint32_t>{static_cast<std::uint32_t>(getpid())});
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::uint64_t w = 5;
    aux_write(fd, &w, sizeof w);
    testing::aux_flush(fd);
    const auto pids = aux_pids();
    _exit(pids.size() == 1 && pids[0] == static_cast<std::uint32_t>(getpid())
              ? 0
              : 1 + (pids.size() == 1));
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: no single AUX record; 2: the parent's pid";
}

TEST(AuxMmap, EveryWriterOfTheBufferLetsGoOfTheAreaWhenItGoes) {
  perf_event_attr attr = aux_attr();
  Fd owner(testing::event_open(&attr, 0, -1, -1, 0));
  Fd other(testing::event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(other, 0);
  auto maps = std::make_unique<MappedAux>(owner, 4, 2, true);
  ASSERT_TRUE(maps->ok());
  // The second source writes into the owner's buffer, and so into its AUX area.
  ASSERT_EQ(
      testing::event_ioctl(other, PERF_EVENT_IOC_SET_OUTPUT, static_cast<unsigned long>(owner.fd)),
      0);
  ASSERT_EQ(testing::event_ioctl(other, PERF_EVENT_IOC_ENABLE, 0), 0);
  write_words(other, 1, 10);
  EXPECT_EQ(maps->aux_head(), 80u);
  // Its handle is on the area: the owner cannot begin one (AUX writers do not nest).
  ASSERT_EQ(testing::event_ioctl(owner, PERF_EVENT_IOC_ENABLE, 0), 0);
  std::uint64_t w = 11;
  EXPECT_NE(aux_write(owner, &w, 8), core::AuxStream::Append::kOk);
  // Leaving the buffer releases the handle; the owner goes on.
  ASSERT_EQ(testing::event_ioctl(other, PERF_EVENT_IOC_SET_OUTPUT, ~0UL), 0);
  EXPECT_EQ(aux_write(owner, &w, 8), core::AuxStream::Append::kOk);
  ASSERT_EQ(
      testing::event_ioctl(other, PERF_EVENT_IOC_SET_OUTPUT, static_cast<unsigned long>(owner.fd)),
      0);
  // The area goes away while both are enabled: nobody writes into freed memory afterwards.
  std::unique_ptr<MappedAux> gone = std::move(maps);
  gone.reset();
  EXPECT_EQ(aux_write(other, &w, 8), core::AuxStream::Append::kStopped);
  EXPECT_EQ(aux_write(owner, &w, 8), core::AuxStream::Append::kStopped);
}

// ---- AUX sampling ------------------------------------------------------------------------------

struct AuxGroup {
  Fd leader;
  Fd sampler;
  MappedAux leader_maps;
  MappedRing sampler_ring;

  AuxGroup(std::uint32_t aux_sample_size, std::size_t aux_pages, std::uint64_t sample_type)
      : leader(open_leader()),
        sampler(open_sampler(leader, aux_sample_size, sample_type)),
        leader_maps(leader, 4, aux_pages, true),
        sampler_ring(sampler, 64) {}
  static int open_leader() {
    perf_event_attr attr = aux_attr();
    return testing::event_open(&attr, 0, -1, -1, 0);
  }
  static int open_sampler(int leader, std::uint32_t size, std::uint64_t sample_type) {
    perf_event_attr attr = testing::test_attr(sample_type | PERF_SAMPLE_AUX);
    attr.aux_sample_size = size;
    return testing::event_open(&attr, 0, -1, leader, 0);
  }
  // The AUX field of the newest sample: its size field and bytes.
  std::vector<std::uint8_t> sample_aux(std::size_t offset_of_aux = 8) {
    const auto recs = sampler_ring.drain();
    std::vector<std::uint8_t> out;
    for (const auto& r : recs) {
      if (testing::record_type(r) != PERF_RECORD_SAMPLE) continue;
      const auto size = testing::field_at<std::uint64_t>(r, offset_of_aux);
      EXPECT_EQ(r.size(), offset_of_aux + 8 + size) << "the record ends with the AUX data";
      out.assign(r.begin() + static_cast<long>(offset_of_aux + 8), r.end());
    }
    return out;
  }
};

TEST(AuxSample, CarriesTheNewestBytesOfTheLeadersTrace) {
  AuxGroup g(1024, 2, 0);
  ASSERT_GE(g.sampler, 0) << strerror(errno);
  ASSERT_TRUE(g.leader_maps.ok());
  ASSERT_EQ(testing::event_ioctl(g.leader, PERF_EVENT_IOC_ENABLE, 0), 0);
  write_words(g.leader, 1, 5000);  // wraps the 8 KiB area
  ASSERT_EQ(testing::fire(g.sampler, 1), 1u);
  const auto aux = g.sample_aux();
  ASSERT_EQ(aux.size(), 1024u);
  expect_words(aux.data(), aux.size(), 5000);
}

TEST(AuxSample, FewerBytesThanAskedArePaddedTo8) {
  AuxGroup g(1024, 2, 0);
  ASSERT_EQ(testing::event_ioctl(g.leader, PERF_EVENT_IOC_ENABLE, 0), 0);
  const char text[13] = "hello, trace";
  ASSERT_EQ(aux_write(g.leader, text, 13), core::AuxStream::Append::kOk);
  ASSERT_EQ(testing::fire(g.sampler, 1), 1u);
  const auto aux = g.sample_aux();
  ASSERT_EQ(aux.size(), 16u);
  EXPECT_EQ(std::memcmp(aux.data(), text, 13), 0);
  EXPECT_EQ(aux[13] | aux[14] | aux[15], 0) << "zero padding";
}

// A sample whose fields after PERIOD are PERF_SAMPLE_AUX alone is sized without prepare_sample
// (output_sample's AUX-tail path); with any other tail field it goes through prepare_sample. Both
// must give the kernel's size: what fits under the 16-bit record size after every field before the
// data, rounded down to 8. Checked at the limit, where the AUX data's size depends on each of them.
TEST(AuxSample, BothSizingPathsStopAtTheSixteenBitLimit) {
  const std::uint64_t kHeadFields[] = {
      0,
      PERF_SAMPLE_IP,
      PERF_SAMPLE_IP | PERF_SAMPLE_TID,
      PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_PERIOD,
      PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
      PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
          PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
          PERF_SAMPLE_PERIOD,
  };
  // Other tail fields of one u64 word each.
  const std::uint64_t kTails[] = {0, PERF_SAMPLE_WEIGHT, PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT};
  for (const std::uint64_t head : kHeadFields) {
    for (const std::uint64_t tail : kTails) {
      SCOPED_TRACE(::testing::Message() << "sample_type " << std::hex << (head | tail));
      AuxGroup g(200000, 32, head | tail);  // 128 KiB area
      ASSERT_GE(g.sampler, 0);
      ASSERT_EQ(testing::event_ioctl(g.leader, PERF_EVENT_IOC_ENABLE, 0), 0);
      write_words(g.leader, 1, 128 * 1024 / 8);
      ASSERT_EQ(testing::fire(g.sampler, 1), 1u);
      const auto recs = g.sampler_ring.drain();
      ASSERT_EQ(recs.size(), 1u);
      const std::size_t words = static_cast<std::size_t>(std::popcount(head | tail));
      const std::size_t fixed = 8 + 8 * words + 8;  // header, head and tail words, aux size
      const auto size = testing::field_at<std::uint64_t>(recs[0], fixed - 8);
      EXPECT_EQ(size, (0xffffu - fixed) & ~7u);
      EXPECT_LE(recs[0].size(), 0xffffu);
      EXPECT_EQ(recs[0].size(), fixed + size);
      expect_words(recs[0].data() + fixed, size, 128 * 1024 / 8);
      // And prepare_sample agrees with the record (it sized it only when tail != 0).
      core::Event* sampler = testing::engine().event(g.sampler);
      ASSERT_NE(sampler, nullptr);
      core::SampleData data;
      core::PreparedSample prepared;
      prepared.aux_available = 128 * 1024;
      ASSERT_TRUE(core::prepare_sample(*sampler, data, prepared));
      EXPECT_EQ(prepared.size, recs[0].size());
      EXPECT_EQ(prepared.aux_size, size);
    }
  }
}

TEST(AuxSample, ZeroWhenTheLeaderIsNotActive) {
  AuxGroup g(512, 2, 0);
  ASSERT_EQ(testing::event_ioctl(g.leader, PERF_EVENT_IOC_ENABLE, 0), 0);
  write_words(g.leader, 1, 100);
  ASSERT_EQ(testing::event_ioctl(g.leader, PERF_EVENT_IOC_DISABLE, 0), 0);
  // A disabled leader takes its group down; enable the sampler alone to see what it writes.
  core::Event* sampler = testing::engine().event(g.sampler);
  ASSERT_NE(sampler, nullptr);
  sampler->state.store(core::EventState::kActive);
  core::SampleData data;
  data.period = 1;
  testing::engine().overflow(*sampler, data, true);
  sampler->state.store(core::EventState::kInactive);
  const auto aux = g.sample_aux();
  EXPECT_TRUE(aux.empty()) << "size 0, no bytes";
}

TEST(AuxSample, SizeZeroAskedGivesAnEmptyField) {
  AuxGroup g(0, 2, 0);
  ASSERT_GE(g.sampler, 0) << "PERF_SAMPLE_AUX without aux_sample_size is accepted";
  ASSERT_EQ(testing::event_ioctl(g.leader, PERF_EVENT_IOC_ENABLE, 0), 0);
  write_words(g.leader, 1, 10);
  ASSERT_EQ(testing::fire(g.sampler, 1), 1u);
  EXPECT_TRUE(g.sample_aux().empty());
}

TEST(AuxSample, OpenErrorsAsTheKernel) {
  perf_event_attr attr = testing::test_attr(PERF_SAMPLE_AUX);
  attr.aux_sample_size = 64;
  EXPECT_EQ(testing::event_open(&attr, 0, -1, -1, 0), -1) << "no group leader";
  EXPECT_EQ(errno, EINVAL);
  perf_event_attr plain = testing::test_attr(PERF_SAMPLE_IP);
  Fd not_aux(testing::event_open(&plain, 0, -1, -1, 0));
  EXPECT_EQ(testing::event_open(&attr, 0, -1, not_aux, 0), -1) << "leader without AUX";
  EXPECT_EQ(errno, EINVAL);
  perf_event_attr lattr = aux_attr();
  Fd leader(testing::event_open(&lattr, 0, -1, -1, 0));
  attr.aux_output = 1;
  EXPECT_EQ(testing::event_open(&attr, 0, -1, leader, 0), -1)
      << "aux_output: the test PMU lacks PERF_PMU_CAP_AUX_OUTPUT";
  EXPECT_EQ(errno, EOPNOTSUPP);
  attr.aux_output = 0;
  Fd ok(testing::event_open(&attr, 0, -1, leader, 0));
  EXPECT_GE(ok, 0) << strerror(errno);
}

TEST(AuxSample, SamplerGoesIntoErrorWhenTheLeaderCloses) {
  const int leader = AuxGroup::open_leader();
  Fd sampler(AuxGroup::open_sampler(leader, 64, 0));
  ASSERT_GE(sampler, 0);
  ASSERT_EQ(testing::event_close(leader), 0);
  std::uint64_t value = 0;
  EXPECT_EQ(testing::event_read(sampler, &value, sizeof value), 0) << "an ERROR event reads EOF";
}

}  // namespace
}  // namespace userperf
