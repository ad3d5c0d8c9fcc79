// RingbufConsumer (libbpf's ring_buffer): a callback's negative return stops consumption, discarded
// records are skipped, poll sleeps until a submit wakes it, rings added later are consumed too.
#include "bpf/maps/ringbuf_consumer.hpp"

#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "map_test_util.hpp"

namespace userperf::bpf {
namespace {

std::shared_ptr<RingbufMap> make_ring() {
  const auto page = static_cast<std::uint32_t>(sysconf(_SC_PAGESIZE));
  auto map = Map::create(test::make_spec(BPF_MAP_TYPE_RINGBUF, 0, 0, page));
  EXPECT_TRUE(map.ok());
  return std::shared_ptr<RingbufMap>(static_cast<RingbufMap*>(map.value().release()));
}

void put(RingbufMap& rb, std::uint8_t value, bool discard = false) {
  auto* p = static_cast<std::uint8_t*>(rb.reserve(1));
  ASSERT_NE(p, nullptr);
  *p = value;
  RingbufMap::commit(p, 0, discard);
}

struct Seen {
  std::vector<int> values;
  int fail_on = -1;
};

int collect(void* ctx, void* data, std::size_t size) {
  auto* seen = static_cast<Seen*>(ctx);
  if (size != 1) return -EMSGSIZE;
  const int v = *static_cast<std::uint8_t*>(data);
  seen->values.push_back(v);
  return v == seen->fail_on ? -7 : 1;  // a positive return goes on, as libbpf's
}

TEST(RingbufConsumer, NegativeCallbackReturnStopsAndDiscardsAreSkipped) {
  auto rb = make_ring();
  auto consumer = RingbufConsumer::create();
  ASSERT_NE(consumer, nullptr);
  Seen seen;
  seen.fail_on = 2;
  ASSERT_EQ(consumer->add(rb, collect, &seen), 0);
  put(*rb, 1);
  put(*rb, 9, true);
  put(*rb, 2);
  put(*rb, 3);
  EXPECT_EQ(consumer->consume(), -7);
  EXPECT_EQ(seen.values, (std::vector<int>{1, 2}));
  EXPECT_EQ(consumer->consume(), 1);  // the failed record counted as consumed
  EXPECT_EQ(seen.values, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(consumer->consume(), 0);
}

TEST(RingbufConsumer, PollSleepsUntilASubmitWakesIt) {
  auto a = make_ring();
  auto b = make_ring();
  auto consumer = RingbufConsumer::create();
  Seen seen_a;
  Seen seen_b;
  ASSERT_EQ(consumer->add(a, collect, &seen_a), 0);
  ASSERT_EQ(consumer->add(b, collect, &seen_b), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(consumer->poll(30), 0);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(25));
  std::thread producer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    put(*b, 5);
  });
  const auto before = std::chrono::steady_clock::now();
  EXPECT_EQ(consumer->poll(10000), 1);
  const auto waited = std::chrono::steady_clock::now() - before;
  producer.join();
  EXPECT_GE(waited, std::chrono::milliseconds(40));
  EXPECT_LT(waited, std::chrono::seconds(5));
  EXPECT_EQ(seen_b.values, (std::vector<int>{5}));
  EXPECT_TRUE(seen_a.values.empty());
  // Data submitted without a wakeup is still found by the next poll, at once.
  auto* p = static_cast<std::uint8_t*>(a->reserve(1));
  *p = 6;
  RingbufMap::commit(p, BPF_RB_NO_WAKEUP, false);
  EXPECT_EQ(consumer->poll(10000), 1);
  EXPECT_EQ(seen_a.values, (std::vector<int>{6}));
}

}  // namespace
}  // namespace userperf::bpf
