// Several producers into one ring, and writers nested by a signal handler, with a consumer
// draining at the same time: no torn or interleaved records, data_head never goes back or covers
// an unfinished record, and every record is either delivered or counted as lost.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "ring/data_ring.hpp"
#include "ring/output_handle.hpp"
#include "ring/reader.hpp"
#include "support/process_barrier.hpp"

namespace userperf::ring {
namespace {

// Body: u32 writer, u32 seq, then bytes that are a function of (writer, seq, index).
std::uint8_t pattern(std::uint32_t writer, std::uint32_t seq, std::size_t i) {
  return static_cast<std::uint8_t>(writer * 131 + seq * 7 + i);
}

bool write_tagged(DataRing& ring, std::uint32_t writer, std::uint32_t seq) {
  const std::uint16_t size = static_cast<std::uint16_t>(16 + 8 * ((writer + seq) % 24));
  OutputHandle h;
  if (h.begin(ring, size, 24) != OutputStatus::kOk) return false;
  if (h.lost() != 0) {
    const perf_event_header lost{PERF_RECORD_LOST, 0, 24};
    h.put(lost);
    h.put(std::uint64_t{0});
    h.put(h.lost());
  }
  const perf_event_header header{PERF_RECORD_SAMPLE, 0, size};
  h.put(header);
  h.put(writer);
  h.put(seq);
  std::uint8_t body[256];
  for (std::size_t i = 0; i < size - 16u; ++i) body[i] = pattern(writer, seq, i);
  h.copy(body, size - 16u);
  h.end();
  return true;
}

struct Consumer {
  RingView view;
  std::map<std::uint32_t, std::int64_t> last_seq;
  std::uint64_t samples = 0;
  std::uint64_t errors = 0;
  std::uint64_t last_head = 0;

  void drain() {
    Reader reader(view);
    const ReadStatus begun = reader.begin();
    if (begun != ReadStatus::kOk) {
      ++errors;
      return;
    }
    const std::uint64_t head =
        std::atomic_ref<__u64>(view.control->data_head).load(std::memory_order_acquire);
    if (static_cast<std::int64_t>(head - last_head) < 0) ++errors;  // head went backwards
    last_head = head;
    Record r;
    ReadStatus s;
    while ((s = reader.next(r)) == ReadStatus::kOk) {
      if (r.header.type != PERF_RECORD_SAMPLE) continue;
      std::uint32_t writer, seq;
      std::memcpy(&writer, r.bytes.data() + 8, 4);
      std::memcpy(&seq, r.bytes.data() + 12, 4);
      bool intact = r.header.size == 16 + 8 * ((writer + seq) % 24);
      for (std::size_t i = 16; intact && i < r.header.size; ++i) {
        intact = r.bytes[i] == pattern(writer, seq, i - 16);
      }
      auto [it, inserted] = last_seq.emplace(writer, -1);
      if (!intact || static_cast<std::int64_t>(seq) <= it->second) ++errors;
      it->second = seq;
      ++samples;
    }
    if (s != ReadStatus::kEmpty) ++errors;
    reader.commit();
    lost += reader.lost();
  }
  std::uint64_t lost = 0;
};

// Once the producers stop, brings the pending lost count out with records tagged `tag`, draining
// as it goes (the ring may be full). Its own failed attempts are lost records too.
struct Flush {
  std::uint64_t written = 0;
  std::uint64_t failed = 0;
};
Flush flush_lost(DataRing& ring, Consumer& consumer, std::uint32_t tag) {
  Flush flush;
  while (ring.pending_lost() != 0) {
    if (write_tagged(ring, tag, static_cast<std::uint32_t>(flush.written))) {
      ++flush.written;
    } else {
      ++flush.failed;
    }
    consumer.drain();
  }
  consumer.drain();
  return flush;
}

TEST(RingConcurrency, SeveralProducersOneRing) {
  std::unique_ptr<DataRing> ring;
  ASSERT_EQ(DataRing::create(16, {}, ring), 0);
  constexpr int kWriters = 4;
  constexpr std::uint32_t kPerWriter = 40000;
  std::atomic<int> running{kWriters};
  std::vector<std::thread> writers;
  std::atomic<std::uint64_t> failed{0};
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (std::uint32_t seq = 0; seq < kPerWriter; ++seq) {
        if (!write_tagged(*ring, static_cast<std::uint32_t>(w), seq)) failed.fetch_add(1);
      }
      running.fetch_sub(1);
    });
  }
  Consumer consumer{RingView{ring->control(), ring->data(), ring->data_size()}, {}, 0, 0, 0};
  std::uint64_t wakeups = 0;
  auto count_wakeups = [&] {
    char buf[256];
    ssize_t n;
    while ((n = read(ring->wakeup_fd(), buf, sizeof buf)) > 0)
      wakeups += static_cast<std::uint64_t>(n);
  };
  while (running.load() > 0) {
    consumer.drain();
    count_wakeups();
  }
  for (auto& t : writers) t.join();
  const Flush flush = flush_lost(*ring, consumer, kWriters);
  count_wakeups();
  EXPECT_EQ(consumer.errors, 0u);
  // One wakeup per watermark of bytes written, whichever writer crosses it: concurrent writers
  // must not see each other's stamps as a crossing (an unsigned comparison woke on every record).
  const std::uint64_t written = ring->control()->data_head;
  EXPECT_LE(wakeups, written / ring->watermark() + 1) << "bytes written: " << written;
  EXPECT_GT(wakeups, 0u);
  EXPECT_EQ(consumer.samples - flush.written + failed.load(), std::uint64_t{kWriters} * kPerWriter);
  EXPECT_EQ(consumer.lost, failed.load() + flush.failed);
}

// Nested writers: a CPU-time timer interrupts the writing thread and writes from its handler.
DataRing* g_ring = nullptr;
std::atomic<std::uint32_t> g_handler_seq{0};
std::atomic<std::uint64_t> g_handler_failed{0};

void nested_writer(int) {
  const int saved = errno;
  const std::uint32_t seq = g_handler_seq.fetch_add(1);
  if (!write_tagged(*g_ring, 99, seq)) g_handler_failed.fetch_add(1);
  errno = saved;
}

// single: the ring is the writer thread's own (RingConfig::single_writer), the kernel's discipline.
void nest_writes_under_a_timer(bool single) {
  g_handler_seq.store(0);
  g_handler_failed.store(0);
  std::unique_ptr<DataRing> ring;
  RingConfig config;
  std::atomic<pid_t> writer_tid{0};
  struct sigaction sa {};
  sa.sa_handler = nested_writer;
  sa.sa_flags = SA_RESTART;
  ASSERT_EQ(sigaction(SIGRTMIN + 5, &sa, nullptr), 0);

  std::atomic<bool> ready{false};
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> failed{0};
  // At least kRecords, and on until the timer has fired (it fires on scheduler ticks of the
  // writer's CPU time: a fast CPU wrote 200,000 records within one tick), at most 50 times as many.
  constexpr std::uint32_t kRecords = 200000;
  std::uint32_t records = 0;
  std::thread writer([&] {
    const auto tid = static_cast<pid_t>(syscall(SYS_gettid));
    if (single) config.single_writer = tid;
    if (DataRing::create(16, config, ring) != 0) {
      ready.store(true);
      done.store(true);
      return;
    }
    g_ring = ring.get();
    writer_tid.store(tid);
    ready.store(true);
    sigevent sev{};
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGRTMIN + 5;
    sev._sigev_un._tid = tid;
    timer_t timer;
    ASSERT_EQ(timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer), 0);
    itimerspec spec{};
    spec.it_interval.tv_nsec = 20'000;
    spec.it_value.tv_nsec = 20'000;
    timer_settime(timer, 0, &spec, nullptr);
    for (std::uint32_t seq = 0;
         seq < kRecords || (g_handler_seq.load() == 0 && seq < 50 * kRecords); ++seq) {
      if (!write_tagged(*g_ring, 1, seq)) failed.fetch_add(1);
      records = seq + 1;
    }
    timer_delete(timer);
    done.store(true);
  });
  while (!ready.load()) std::this_thread::yield();
  ASSERT_NE(ring, nullptr);
  Consumer consumer{RingView{ring->control(), ring->data(), ring->data_size()}, {}, 0, 0, 0};
  while (!done.load()) consumer.drain();
  writer.join();
  // Still the writer's own: nothing but it (and its handler) wrote.
  if (single && support::process_barrier_available()) {
    EXPECT_EQ(ring->single_writer(), writer_tid.load());
  }
  const Flush flush = flush_lost(*ring, consumer, 1000);
  EXPECT_EQ(consumer.errors, 0u);
  const std::uint64_t handler_records = g_handler_seq.load();
  EXPECT_GT(handler_records, 0u) << "the timer never interrupted the writer";
  EXPECT_EQ(consumer.samples - flush.written + failed.load() + g_handler_failed.load(),
            records + handler_records);
  EXPECT_EQ(consumer.lost, failed.load() + g_handler_failed.load() + flush.failed);
  signal(SIGRTMIN + 5, SIG_DFL);
}

TEST(RingConcurrency, SignalHandlerNestsInsideWritesOfASharedRing) {
  nest_writes_under_a_timer(false);
}

TEST(RingConcurrency, SignalHandlerNestsInsideWritesOfASingleWriterRing) {
  if (!support::process_barrier_available()) {
    GTEST_SKIP() << "membarrier(PRIVATE_EXPEDITED) is unavailable: every ring is shared";
  }
  nest_writes_under_a_timer(true);
}

// A single-writer ring that another thread writes into too: the first foreign write makes it
// shared while the owner keeps writing (and its timer keeps nesting writes); no record is torn,
// lost without being counted, or published early.
TEST(RingConcurrency, AForeignWriterMakesASingleWriterRingShared) {
  if (!support::process_barrier_available()) {
    GTEST_SKIP() << "membarrier(PRIVATE_EXPEDITED) is unavailable: every ring is shared";
  }
  g_handler_seq.store(0);
  g_handler_failed.store(0);
  std::unique_ptr<DataRing> ring;
  std::atomic<bool> ready{false};
  std::atomic<bool> owner_done{false};
  std::atomic<bool> foreign_done{false};
  std::atomic<std::uint64_t> failed{0};
  constexpr std::uint32_t kOwnerRecords = 300000;
  constexpr std::uint32_t kForeignRecords = 100000;
  std::atomic<std::uint32_t> owner_written{0};
  std::thread owner([&] {
    RingConfig config;
    config.single_writer = static_cast<pid_t>(syscall(SYS_gettid));
    if (DataRing::create(16, config, ring) != 0) {
      ready.store(true);
      owner_done.store(true);
      return;
    }
    g_ring = ring.get();
    ready.store(true);
    for (std::uint32_t seq = 0; seq < kOwnerRecords; ++seq) {
      if (!write_tagged(*ring, 1, seq)) failed.fetch_add(1);
      owner_written.store(seq + 1, std::memory_order_relaxed);
    }
    owner_done.store(true);
  });
  while (!ready.load()) std::this_thread::yield();
  ASSERT_NE(ring, nullptr);
  EXPECT_NE(ring->single_writer(), 0);
  std::thread foreign([&] {
    while (owner_written.load(std::memory_order_relaxed) < kOwnerRecords / 4) {
      std::this_thread::yield();
    }
    for (std::uint32_t seq = 0; seq < kForeignRecords; ++seq) {
      if (!write_tagged(*ring, 2, seq)) failed.fetch_add(1);
    }
    foreign_done.store(true);
  });
  Consumer consumer{RingView{ring->control(), ring->data(), ring->data_size()}, {}, 0, 0, 0};
  while (!owner_done.load() || !foreign_done.load()) consumer.drain();
  owner.join();
  foreign.join();
  EXPECT_EQ(ring->single_writer(), 0) << "a foreign write left the ring single-writer";
  const Flush flush = flush_lost(*ring, consumer, 1000);
  EXPECT_EQ(consumer.errors, 0u);
  EXPECT_EQ(consumer.samples - flush.written + failed.load(), kOwnerRecords + kForeignRecords);
  EXPECT_EQ(consumer.lost, failed.load() + flush.failed);
}

}  // namespace
}  // namespace userperf::ring
