// The AUX byte lock's biased owner (ring::AuxWriter, docs/aux.md "The byte lock and its owner"):
// the thread that appends owns the area and stores and samples without the lock; a signal that
// samples (or appends) in the middle of the owner's own store sees a consistent area; a sampler on
// another thread revokes the bias and is exclusive.
//
// A store is interrupted deterministically: the entry's last bytes lie on a PROT_NONE page, so the
// append's memcpy faults; the SIGSEGV handler acts (samples, appends) and then makes the page
// readable, and the memcpy resumes where it faulted.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "support/aux_events.hpp"

namespace userperf {
namespace {

using testing::aux_attr;
using testing::aux_write;
using testing::MappedAux;
using testing::MappedRing;
using testing::page;

constexpr std::size_t kAuxPages = 1;  // the area wraps constantly
constexpr std::uint32_t kSampleSize = 4096;

// Words 1, 2, 3, ...: word w sits at stream position 8 * (w - 1), so any window can be checked.
void expect_words(const std::uint8_t* bytes, std::size_t len, std::uint64_t last) {
  ASSERT_EQ(len % 8, 0u);
  const std::size_t n = len / 8;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t w;
    std::memcpy(&w, bytes + 8 * i, 8);
    ASSERT_EQ(w, last - (n - 1 - i)) << "word " << i << " of " << n;
  }
}

// A test_aux leader (overwrite, one page) and a test-PMU sampler in its group with
// PERF_SAMPLE_AUX (the AUX field alone), both enabled, with their events resolved so that a
// signal handler can drive them without the engine lock.
struct OwnedGroup {
  int leader = -1;
  int sampler = -1;
  std::unique_ptr<MappedAux> leader_maps;
  std::unique_ptr<MappedRing> sampler_ring;
  core::Event* leader_event = nullptr;
  core::Event* sampler_event = nullptr;

  OwnedGroup() {
    perf_event_attr lattr = aux_attr();
    leader = testing::event_open(&lattr, 0, -1, -1, 0);
    perf_event_attr sattr = testing::test_attr(PERF_SAMPLE_AUX);
    sattr.aux_sample_size = kSampleSize;
    sampler = testing::event_open(&sattr, 0, -1, leader, 0);
    leader_maps = std::make_unique<MappedAux>(leader, 4, kAuxPages, /*overwrite=*/true);
    sampler_ring = std::make_unique<MappedRing>(sampler, 16);
    if (!leader_maps->ok() || !sampler_ring->ok()) return;
    if (testing::event_ioctl(leader, PERF_EVENT_IOC_ENABLE, 0) != 0) return;
    leader_event = testing::engine().event(leader);
    sampler_event = testing::engine().event(sampler);
  }
  ~OwnedGroup() {
    sampler_ring.reset();
    leader_maps.reset();
    if (sampler >= 0) testing::event_close(sampler);
    if (leader >= 0) testing::event_close(leader);
  }
  bool ok() const { return sampler_event != nullptr; }
  const ring::AuxWriter& writer() const {
    return static_cast<testing::TestAuxPmu*>(leader_event->pmu)
        ->source_of(*leader_event)
        ->stream.writer();
  }
  std::uint64_t dropped() const {
    return static_cast<testing::TestAuxPmu*>(leader_event->pmu)
        ->source_of(*leader_event)
        ->stream.dropped();
  }
  // Signal-safe: no descriptor lookup.
  std::uint64_t fire() {
    return static_cast<testing::TestPmu*>(sampler_event->pmu)
        ->count(testing::engine(), *sampler_event, 1, core::SampleData{});
  }
  core::AuxStream::Append append(const void* bytes, std::size_t len) {
    return static_cast<testing::TestAuxPmu*>(leader_event->pmu)->write(*leader_event, bytes, len);
  }
  // The AUX fields of the samples written since the last call.
  std::vector<std::vector<std::uint8_t>> samples() {
    std::vector<std::vector<std::uint8_t>> out;
    for (const auto& r : sampler_ring->drain()) {
      if (testing::record_type(r) != PERF_RECORD_SAMPLE) continue;
      const auto size = testing::field_at<std::uint64_t>(r, 8);
      EXPECT_EQ(r.size(), 16 + size);
      out.emplace_back(r.begin() + 16, r.end());
    }
    return out;
  }
};

void write_words(OwnedGroup& g, std::uint64_t first, std::uint64_t count) {
  for (std::uint64_t w = first; w < first + count; ++w) {
    ASSERT_EQ(g.append(&w, sizeof w), core::AuxStream::Append::kOk) << w;
  }
}

TEST(AuxOwner, TheAppendingThreadOwnsTheAreaAndSamplesWithoutRevokingIt) {
  OwnedGroup g;
  ASSERT_TRUE(g.ok()) << strerror(errno);
  if (!ring::aux_bias_enabled()) GTEST_SKIP() << "membarrier PRIVATE_EXPEDITED is unavailable";
  write_words(g, 1, 1000);  // wraps the 4 KiB area
  EXPECT_EQ(g.writer().owner.load(), ring::aux_thread_token()) << "the first append claims it";
  ASSERT_EQ(g.fire(), 1u);
  const auto s = g.samples();
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].size(), kSampleSize);
  expect_words(s[0].data(), s[0].size(), 1000);
  EXPECT_EQ(g.writer().owner.load(), ring::aux_thread_token()) << "a same-thread sample keeps it";
  EXPECT_FALSE(g.writer().contended.load());
  EXPECT_EQ(g.writer().busy.load(), 0u);
  write_words(g, 1001, 10);
  EXPECT_EQ(g.dropped(), 0u);
}

// ---- a signal inside the owner's own store ----------------------------------------------------

struct Interrupt {
  OwnedGroup* group = nullptr;
  void* guard_page = nullptr;
  bool append_instead = false;  // the handler appends rather than samples
  int faults = 0;
  std::uintptr_t busy_seen = 0;
  std::uint64_t fired = 0;
  core::AuxStream::Append nested_append = core::AuxStream::Append::kOk;
};
Interrupt g_interrupt;

void on_fault(int, siginfo_t* info, void*) {
  Interrupt& in = g_interrupt;
  const auto* at = static_cast<std::uint8_t*>(info->si_addr);
  const auto* page_start = static_cast<std::uint8_t*>(in.guard_page);
  if (at < page_start || at >= page_start + page()) abort();  // not ours: a real crash
  ++in.faults;
  in.busy_seen = in.group->writer().busy.load();
  if (in.append_instead) {
    const std::uint64_t w = 0xdead;
    in.nested_append = in.group->append(&w, sizeof w);
  } else {
    in.fired += in.group->fire();
  }
  mprotect(in.guard_page, page(), PROT_READ | PROT_WRITE);  // the memcpy resumes
}

// An entry of `words` words (first, first + 1, ...) whose last half lies on a page that faults.
struct FaultingEntry {
  std::uint8_t* pages = nullptr;
  const std::uint8_t* data = nullptr;
  std::size_t len = 0;

  FaultingEntry(std::uint64_t first, std::size_t words) : len(words * 8) {
    void* p = mmap(nullptr, 2 * page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    pages = static_cast<std::uint8_t*>(p);
    std::uint8_t* start = pages + page() - len / 2;
    for (std::size_t i = 0; i < words; ++i) {
      const std::uint64_t w = first + i;
      std::memcpy(start + 8 * i, &w, 8);
    }
    mprotect(pages + page(), page(), PROT_NONE);
    data = start;
  }
  ~FaultingEntry() {
    if (pages != nullptr) munmap(pages, 2 * page());
  }
  void* guard_page() const { return pages + page(); }
};

struct FaultHandler {
  struct sigaction old {};
  FaultHandler() {
    struct sigaction sa {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old);
  }
  ~FaultHandler() { sigaction(SIGSEGV, &old, nullptr); }
};

TEST(AuxOwner, ASignalSampleInsideTheOwnersStoreSeesTheCompleteBytesItIsNotOverwriting) {
  OwnedGroup g;
  ASSERT_TRUE(g.ok()) << strerror(errno);
  if (!ring::aux_bias_enabled()) GTEST_SKIP() << "membarrier PRIVATE_EXPEDITED is unavailable";
  write_words(g, 1, 1000);
  ASSERT_EQ(g.writer().owner.load(), ring::aux_thread_token());
  const std::size_t words = 64;  // a 512-byte entry, words 1001..1064
  FaultingEntry entry(1001, words);
  ASSERT_NE(entry.data, nullptr);
  g_interrupt = Interrupt{};
  g_interrupt.group = &g;
  g_interrupt.guard_page = entry.guard_page();
  {
    FaultHandler handler;
    ASSERT_EQ(g.append(entry.data, entry.len), core::AuxStream::Append::kOk);
  }
  ASSERT_EQ(g_interrupt.faults, 1);
  EXPECT_EQ(g_interrupt.busy_seen, ring::aux_thread_token() | ring::AuxWriter::kAppending)
      << "the handler ran inside the owner's unlocked store";
  ASSERT_EQ(g_interrupt.fired, 1u);
  ASSERT_EQ(g.fire(), 1u);  // and one after the store
  const auto s = g.samples();
  ASSERT_EQ(s.size(), 2u);
  // Inside: the newest bytes that the store (512 bytes wrapping onto the oldest) is not
  // overwriting, ending at the last complete entry.
  ASSERT_EQ(s[0].size(), kSampleSize - entry.len);
  expect_words(s[0].data(), s[0].size(), 1000);
  // After: the whole area, ending with the entry.
  ASSERT_EQ(s[1].size(), kSampleSize);
  expect_words(s[1].data(), s[1].size(), 1000 + words);
  EXPECT_EQ(g.writer().owner.load(), ring::aux_thread_token()) << "nothing revoked the owner";
  EXPECT_EQ(g.dropped(), 0u);
}

TEST(AuxOwner, AnAppendInsideTheOwnersStoreIsDroppedAndTheRecordSaysPartial) {
  OwnedGroup g;
  ASSERT_TRUE(g.ok()) << strerror(errno);
  if (!ring::aux_bias_enabled()) GTEST_SKIP() << "membarrier PRIVATE_EXPEDITED is unavailable";
  write_words(g, 1, 10);
  FaultingEntry entry(11, 8);
  ASSERT_NE(entry.data, nullptr);
  g_interrupt = Interrupt{};
  g_interrupt.group = &g;
  g_interrupt.guard_page = entry.guard_page();
  g_interrupt.append_instead = true;
  {
    FaultHandler handler;
    ASSERT_EQ(g.append(entry.data, entry.len), core::AuxStream::Append::kOk);
  }
  ASSERT_EQ(g_interrupt.faults, 1);
  EXPECT_EQ(g_interrupt.nested_append, core::AuxStream::Append::kNested);
  EXPECT_EQ(g.dropped(), 1u);
  // A gap a nested writer cannot mark in the open handle goes to the next handle's record.
  testing::aux_flush(g.leader);
  testing::aux_flush(g.leader);
  const auto records = testing::aux_records(g.leader_maps->ring.drain());
  ASSERT_FALSE(records.empty());
  bool partial = false;
  for (const auto& r : records) partial |= (r.flags & PERF_AUX_FLAG_PARTIAL) != 0;
  EXPECT_TRUE(partial) << "the gap is reported";
  // The stream itself is whole: words 1..18, the dropped word nowhere.
  ASSERT_EQ(g.fire(), 1u);
  const auto s = g.samples();
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].size(), 18u * 8);
  expect_words(s[0].data(), s[0].size(), 18);
}

// ---- another thread ---------------------------------------------------------------------------

TEST(AuxOwner, ASampleOnAnotherThreadRevokesTheBiasUntilTheNextHandle) {
  OwnedGroup g;
  ASSERT_TRUE(g.ok()) << strerror(errno);
  if (!ring::aux_bias_enabled()) GTEST_SKIP() << "membarrier PRIVATE_EXPEDITED is unavailable";
  write_words(g, 1, 600);
  ASSERT_EQ(g.writer().owner.load(), ring::aux_thread_token());
  std::uint64_t fired = 0;
  std::thread other([&] { fired = g.fire(); });
  other.join();
  ASSERT_EQ(fired, 1u);
  EXPECT_EQ(g.writer().owner.load(), 0u) << "revoked";
  EXPECT_TRUE(g.writer().contended.load());
  write_words(g, 601, 10);
  EXPECT_EQ(g.writer().owner.load(), 0u) << "not claimed again during the same handle";
  testing::aux_flush(g.leader);  // a new handle
  write_words(g, 611, 1);
  EXPECT_EQ(g.writer().owner.load(), ring::aux_thread_token()) << "claimed on the new handle";
  ASSERT_EQ(g.fire(), 1u);
  const auto s = g.samples();
  ASSERT_EQ(s.size(), 2u);
  ASSERT_EQ(s[0].size(), kSampleSize);
  expect_words(s[0].data(), s[0].size(), 600);
  expect_words(s[1].data(), s[1].size(), 611);
}

TEST(AuxOwner, DisablingFromTheOwnerThreadEndsTheHandleAndTheNextEnableReclaims) {
  OwnedGroup g;
  ASSERT_TRUE(g.ok()) << strerror(errno);
  if (!ring::aux_bias_enabled()) GTEST_SKIP() << "membarrier PRIVATE_EXPEDITED is unavailable";
  write_words(g, 1, 5);
  ASSERT_EQ(testing::event_ioctl(g.leader, PERF_EVENT_IOC_DISABLE, 0), 0);
  EXPECT_EQ(g.writer().owner.load(), 0u);
  const std::uint64_t w = 6;
  EXPECT_EQ(g.append(&w, sizeof w), core::AuxStream::Append::kStopped);
  ASSERT_EQ(testing::event_ioctl(g.leader, PERF_EVENT_IOC_ENABLE, 0), 0);
  write_words(g, 6, 5);
  EXPECT_EQ(g.writer().owner.load(), ring::aux_thread_token());
  EXPECT_EQ(g.leader_maps->aux_head(), 80u);
}

}  // namespace
}  // namespace userperf
