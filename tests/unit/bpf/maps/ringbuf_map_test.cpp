// BPF_MAP_TYPE_RINGBUF: creation checks, record layout, wrap-around, full ring, discard, and a
// reservation nested in a signal handler that interrupts another on the same thread.
#include "bpf/maps/ringbuf_map.hpp"

#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "map_test_util.hpp"

namespace userperf::bpf {
namespace {

using test::make_spec;

const std::uint32_t kPage = static_cast<std::uint32_t>(sysconf(_SC_PAGESIZE));

std::unique_ptr<RingbufMap> make_ring(std::uint32_t size) {
  auto map = Map::create(make_spec(BPF_MAP_TYPE_RINGBUF, 0, 0, size));
  EXPECT_TRUE(map.ok()) << (map.ok() ? "" : map.error().message);
  if (!map.ok()) return nullptr;
  return std::unique_ptr<RingbufMap>(static_cast<RingbufMap*>(map.value().release()));
}

// Consumes every ready record from the consumer position; returns their payload sizes.
std::vector<std::uint32_t> drain(RingbufMap& rb, std::vector<std::uint8_t>* first_bytes = nullptr) {
  std::vector<std::uint32_t> sizes;
  std::uint64_t pos = rb.consumer_pos();
  for (;;) {
    const RingbufRecord rec = rb.record_at(pos);
    if (rec.state == RingbufRecord::State::kEmpty || rec.state == RingbufRecord::State::kBusy)
      break;
    if (rec.state == RingbufRecord::State::kReady) {
      sizes.push_back(rec.size);
      if (first_bytes != nullptr && rec.size > 0) {
        first_bytes->push_back(*static_cast<const std::uint8_t*>(rec.data));
      }
    }
    pos = rec.next_pos;
    rb.set_consumer_pos(pos);
  }
  return sizes;
}

TEST(RingbufMapCreate, KernelChecks) {
  EXPECT_TRUE(Map::create(make_spec(BPF_MAP_TYPE_RINGBUF, 0, 0, kPage)).ok());
  EXPECT_TRUE(Map::create(make_spec(BPF_MAP_TYPE_RINGBUF, 0, 0, 16 * kPage, BPF_F_NUMA_NODE)).ok());
  for (const MapSpec& bad :
       {make_spec(BPF_MAP_TYPE_RINGBUF, 0, 0, 0), make_spec(BPF_MAP_TYPE_RINGBUF, 0, 0, 3 * kPage),
        make_spec(BPF_MAP_TYPE_RINGBUF, 0, 0, kPage / 2),
        make_spec(BPF_MAP_TYPE_RINGBUF, 4, 0, kPage), make_spec(BPF_MAP_TYPE_RINGBUF, 0, 8, kPage),
        make_spec(BPF_MAP_TYPE_RINGBUF, 0, 0, kPage, BPF_F_RDONLY_PROG),
        make_spec(BPF_MAP_TYPE_RINGBUF, 0, 0, kPage, BPF_F_MMAPABLE)}) {
    auto map = Map::create(bad);
    ASSERT_FALSE(map.ok()) << bad.key_size << " " << bad.value_size << " " << bad.max_entries;
    EXPECT_EQ(map.error().code, EINVAL);
  }
}

TEST(RingbufMap, RecordHeaderAndQuery) {
  auto rb = make_ring(kPage);
  ASSERT_NE(rb, nullptr);
  auto* p = static_cast<std::uint8_t*>(rb->reserve(5));
  ASSERT_NE(p, nullptr);
  const auto* hdr = reinterpret_cast<const RingbufHeader*>(p - kRingbufHeaderSize);
  EXPECT_EQ(hdr->len, 5u | BPF_RINGBUF_BUSY_BIT);
  EXPECT_EQ(hdr->pg_off, 2u);                  // data starts after the consumer and producer pages
  EXPECT_EQ(rb->query(BPF_RB_PROD_POS), 16u);  // 8 + 5 rounded up to 8
  EXPECT_EQ(rb->query(BPF_RB_AVAIL_DATA), 16u);
  EXPECT_EQ(rb->query(BPF_RB_RING_SIZE), kPage);
  EXPECT_EQ(rb->query(BPF_RB_CONS_POS), 0u);
  EXPECT_EQ(rb->query(99), 0u);
  EXPECT_EQ(rb->record_at(0).state, RingbufRecord::State::kBusy);
  std::memcpy(p, "hello", 5);
  RingbufMap::commit(p, 0, false);
  EXPECT_EQ(hdr->len, 5u);
  const RingbufRecord rec = rb->record_at(0);
  ASSERT_EQ(rec.state, RingbufRecord::State::kReady);
  EXPECT_EQ(std::memcmp(rec.data, "hello", 5), 0);
  EXPECT_EQ(rec.next_pos, 16u);
  EXPECT_EQ(rb->lookup_elem(nullptr, nullptr), -kEnotsupp);
}

TEST(RingbufMap, FullRingRefusesAndFreesAfterConsumption) {
  auto rb = make_ring(kPage);
  ASSERT_NE(rb, nullptr);
  EXPECT_EQ(rb->reserve(kPage), nullptr);  // header + payload exceed the ring
  EXPECT_EQ(rb->reserve(kRingbufMaxRecord + 1ULL), nullptr);
  // 8-byte header + 504 payload = 512: seven fit (the producer stays at most size - 1 ahead).
  std::vector<void*> recs;
  for (void* p; (p = rb->reserve(kPage / 8 - 8)) != nullptr;) recs.push_back(p);
  EXPECT_EQ(recs.size(), 7u);
  void* small = rb->reserve(0);  // a bare header still fits
  ASSERT_NE(small, nullptr);
  recs.push_back(small);
  for (void* p : recs) RingbufMap::commit(p, BPF_RB_NO_WAKEUP, false);
  EXPECT_EQ(rb->record_at(rb->consumer_pos()).state, RingbufRecord::State::kReady);
}

TEST(RingbufMap, WrappedRecordIsContiguous) {
  auto rb = make_ring(kPage);
  ASSERT_NE(rb, nullptr);
  // Move the positions to 40 bytes before the end.
  void* pad = rb->reserve(kPage - 40 - 8);
  ASSERT_NE(pad, nullptr);
  RingbufMap::commit(pad, 0, false);
  ASSERT_EQ(drain(*rb).size(), 1u);
  ASSERT_EQ(rb->consumer_pos(), kPage - 40);
  auto* p = static_cast<std::uint8_t*>(rb->reserve(100));  // crosses the end of the data area
  ASSERT_NE(p, nullptr);
  for (int i = 0; i < 100; ++i) p[i] = static_cast<std::uint8_t>(i);
  RingbufMap::commit(p, 0, false);
  const RingbufRecord rec = rb->record_at(rb->consumer_pos());
  ASSERT_EQ(rec.state, RingbufRecord::State::kReady);
  ASSERT_EQ(rec.size, 100u);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(static_cast<const std::uint8_t*>(rec.data)[i], i) << i;
  }
  // The bytes past the end are the data area's first bytes (the second view).
  const MemoryRegion region = rb->value_region();
  const auto* data = reinterpret_cast<const std::uint8_t*>(region.begin);
  EXPECT_EQ(data[100 - 32 - 1], 99);  // 32 payload bytes before the end, 68 after it
  EXPECT_EQ(region.end - region.begin, 2ULL * kPage);
}

TEST(RingbufMap, DiscardedRecordsAreSkippedAndConsumerWaitsOnBusy) {
  auto rb = make_ring(kPage);
  ASSERT_NE(rb, nullptr);
  auto* a = static_cast<std::uint8_t*>(rb->reserve(8));
  auto* b = static_cast<std::uint8_t*>(rb->reserve(8));
  auto* c = static_cast<std::uint8_t*>(rb->reserve(8));
  ASSERT_TRUE(a && b && c);
  *a = 1;
  *b = 2;
  *c = 3;
  RingbufMap::commit(c, 0, false);
  EXPECT_TRUE(drain(*rb).empty());  // a is still busy: nothing after it is read
  RingbufMap::commit(b, 0, true);
  RingbufMap::commit(a, 0, false);
  std::vector<std::uint8_t> firsts;
  EXPECT_EQ(drain(*rb, &firsts), (std::vector<std::uint32_t>{8, 8}));
  EXPECT_EQ(firsts, (std::vector<std::uint8_t>{1, 3}));
  EXPECT_EQ(rb->query(BPF_RB_AVAIL_DATA), 0u);
}

TEST(RingbufMap, WakeupsFollowTheKernelsRule) {
  auto rb = make_ring(kPage);
  ASSERT_NE(rb, nullptr);
  pollfd pfd{rb->wakeup_fd(), POLLIN, 0};
  void* a = rb->reserve(8);
  void* b = rb->reserve(8);
  RingbufMap::commit(b, 0, false);  // not the record the consumer waits at
  EXPECT_EQ(poll(&pfd, 1, 0), 0);
  RingbufMap::commit(a, BPF_RB_NO_WAKEUP, false);  // at the consumer, but NO_WAKEUP
  EXPECT_EQ(poll(&pfd, 1, 0), 0);
  drain(*rb);
  void* c = rb->reserve(8);
  RingbufMap::commit(c, 0, false);  // at the consumer: wakes
  EXPECT_EQ(poll(&pfd, 1, 0), 1);
  EXPECT_TRUE(rb->take_wakeup());
  EXPECT_EQ(poll(&pfd, 1, 0), 0);
  void* d = rb->reserve(8);
  void* e = rb->reserve(8);
  RingbufMap::commit(e, BPF_RB_FORCE_WAKEUP, false);  // elsewhere, forced
  EXPECT_EQ(poll(&pfd, 1, 0), 1);
  RingbufMap::commit(d, 0, false);
}

// Signals interrupt this thread's reservations at random points (a second thread sends them as
// fast as it can), including between a claim and its publication, and reserve in the handler:
// every nested reservation must succeed or fail for lack of room (never hang), and every record
// must reach the consumer once the storm ends.
RingbufMap* g_ring = nullptr;
std::atomic<int> g_nested_ok{0};

void reserve_in_handler(int) {
  void* p = g_ring->reserve(16);
  if (p != nullptr) {
    std::memset(p, 0x5a, 16);
    RingbufMap::commit(p, BPF_RB_NO_WAKEUP, false);
    g_nested_ok.fetch_add(1, std::memory_order_relaxed);
  }
}

TEST(RingbufMap, NestedReservationFromASignalHandler) {
  auto rb = make_ring(64 * kPage);
  ASSERT_NE(rb, nullptr);
  g_ring = rb.get();
  g_nested_ok = 0;
  struct sigaction sa {};
  sa.sa_handler = reserve_in_handler;
  sa.sa_flags = SA_RESTART;
  struct sigaction old {};
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
  // Inside an open record as well.
  void* outer = rb->reserve(24);
  ASSERT_NE(outer, nullptr);
  raise(SIGUSR1);
  RingbufMap::commit(outer, BPF_RB_NO_WAKEUP, false);
  const pthread_t self = pthread_self();
  std::atomic<bool> stop{false};
  std::thread storm([&] {
    while (!stop.load(std::memory_order_relaxed)) pthread_kill(self, SIGUSR1);
  });
  std::uint64_t outer_records = 1;
  std::uint64_t consumed = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (int i = 0;
       i < 200000 || (g_nested_ok.load() < 1000 && std::chrono::steady_clock::now() < deadline);
       ++i) {
    void* p = rb->reserve(8);
    if (p == nullptr) {
      consumed += drain(*rb).size();
      continue;
    }
    RingbufMap::commit(p, BPF_RB_NO_WAKEUP, false);
    ++outer_records;
    if ((i & 255) == 0) consumed += drain(*rb).size();
  }
  stop = true;
  storm.join();
  // Sigaction restored only after the last pending signal was handled.
  sigset_t pending;
  while (sigpending(&pending) == 0 && sigismember(&pending, SIGUSR1)) usleep(100);
  sigaction(SIGUSR1, &old, nullptr);
  consumed += drain(*rb).size();
  EXPECT_GE(g_nested_ok.load(), 1000);
  EXPECT_EQ(consumed, outer_records + static_cast<std::uint64_t>(g_nested_ok.load()));
  EXPECT_EQ(rb->query(BPF_RB_AVAIL_DATA), 0u);  // every record published and consumed
}

}  // namespace
}  // namespace userperf::bpf
