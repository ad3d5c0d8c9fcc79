// BPF_MAP_TYPE_RINGBUF with several producer threads and one consumer thread at once: every
// submitted record arrives exactly once, intact, and discarded ones never (run under TSan).
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "bpf/maps/ringbuf_map.hpp"
#include "map_test_util.hpp"

namespace userperf::bpf {
namespace {

struct Payload {
  std::uint32_t thread;
  std::uint32_t seq;
  std::uint64_t check;  // thread * 1e9 + seq, repeated so torn records show
};

TEST(RingbufMapConcurrency, ProducersAndAConsumer) {
  const auto page = static_cast<std::uint32_t>(sysconf(_SC_PAGESIZE));
  auto created = Map::create(test::make_spec(BPF_MAP_TYPE_RINGBUF, 0, 0, 4 * page));
  ASSERT_TRUE(created.ok());
  auto* rb = static_cast<RingbufMap*>(created.value().get());
  constexpr int kThreads = 4;
  constexpr std::uint32_t kPerThread = 20000;
  std::atomic<int> producing{kThreads};
  std::vector<std::thread> producers;
  std::atomic<std::uint64_t> discarded{0};
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      for (std::uint32_t seq = 0; seq < kPerThread;) {
        // Sizes vary so records straddle the end of the data area at varying offsets.
        const std::uint64_t extra = seq % 5 * 8;
        auto* p = static_cast<std::uint8_t*>(rb->reserve(sizeof(Payload) + extra));
        if (p == nullptr) {
          std::this_thread::yield();
          continue;
        }
        const Payload payload{static_cast<std::uint32_t>(t), seq,
                              std::uint64_t{static_cast<std::uint32_t>(t)} * 1000000000u + seq};
        std::memcpy(p, &payload, sizeof payload);
        const bool discard = seq % 7 == 3;
        if (discard) discarded.fetch_add(1, std::memory_order_relaxed);
        RingbufMap::commit(p, 0, discard);
        ++seq;
      }
      producing.fetch_sub(1);
    });
  }
  std::vector<std::uint32_t> next(kThreads, 0);
  std::uint64_t received = 0;
  bool ordered = true;
  bool intact = true;
  for (;;) {
    const bool done = producing.load() == 0;
    std::uint64_t pos = rb->consumer_pos();
    for (RingbufRecord rec = rb->record_at(pos);
         rec.state == RingbufRecord::State::kReady || rec.state == RingbufRecord::State::kDiscarded;
         rec = rb->record_at(pos)) {
      if (rec.state == RingbufRecord::State::kReady) {
        Payload got;
        std::memcpy(&got, rec.data, sizeof got);
        intact = intact && got.thread < kThreads &&
                 got.check == std::uint64_t{got.thread} * 1000000000u + got.seq;
        if (got.thread < kThreads) {
          // Per thread, records arrive in order, the discarded ones missing.
          ordered = ordered && got.seq >= next[got.thread] && got.seq % 7 != 3;
          next[got.thread] = got.seq + 1;
        }
        ++received;
      }
      pos = rec.next_pos;
      rb->set_consumer_pos(pos);
    }
    if (done && rb->producer_pos() == rb->consumer_pos()) break;
    pollfd pfd{rb->wakeup_fd(), POLLIN, 0};
    poll(&pfd, 1, 1);
    rb->take_wakeup();
  }
  for (std::thread& t : producers) t.join();
  EXPECT_TRUE(intact);
  EXPECT_TRUE(ordered);
  EXPECT_EQ(received + discarded.load(), std::uint64_t{kThreads} * kPerThread);
}

}  // namespace
}  // namespace userperf::bpf
