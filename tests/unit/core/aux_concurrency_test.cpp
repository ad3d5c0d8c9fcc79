// AUX sampling while the trace source writes from another thread (run under TSan too): every sample
// must carry a window of the trace that was complete when it was copied, never torn bytes. The
// writer thread owns the area's byte lock (ring::AuxWriter); a sampler on another thread revokes
// that bias and excludes the writer, a sampler in a signal handler on the writer's own thread does
// not (and may interrupt the writer's unlocked store).
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "support/aux_events.hpp"

namespace userperf {
namespace {

// A sample's AUX window (`size` bytes of entries {k, k, k}, ending at an entry boundary): whole,
// consecutive entries.
void expect_whole_entries(const std::vector<std::uint8_t>& r, std::uint64_t size) {
  const std::uint8_t* end = r.data() + 16 + size;
  std::uint64_t prev = 0;
  for (std::size_t e = 1; e * 24 <= size; ++e) {
    std::uint64_t w[3];
    std::memcpy(w, end - e * 24, sizeof w);
    ASSERT_EQ(w[0], w[1]);
    ASSERT_EQ(w[1], w[2]);
    if (prev != 0) {
      ASSERT_EQ(w[0] + 1, prev) << "consecutive entries";
    }
    prev = w[0];
  }
}

TEST(AuxSampleConcurrency, SamplesSeeWholeWindowsWhileAnotherThreadWrites) {
  perf_event_attr lattr = testing::aux_attr();
  const int leader = testing::event_open(&lattr, 0, -1, -1, 0);
  ASSERT_GE(leader, 0);
  perf_event_attr sattr = testing::test_attr(PERF_SAMPLE_AUX);
  sattr.aux_sample_size = 512;
  const int sampler = testing::event_open(&sattr, 0, -1, leader, 0);
  ASSERT_GE(sampler, 0) << strerror(errno);
  {
    testing::MappedAux maps(leader, 4, 1, /*overwrite=*/true);  // one page: wraps constantly
    testing::MappedRing ring(sampler, 256);
    ASSERT_TRUE(maps.ok());
    ASSERT_EQ(testing::event_ioctl(leader, PERF_EVENT_IOC_ENABLE, 0), 0);
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> written{0};
    std::thread writer([&] {
      // Entries of three words {k, k, k}: a torn copy would show mismatched words.
      for (std::uint64_t k = 1; !stop.load(std::memory_order_relaxed); ++k) {
        const std::uint64_t entry[3] = {k, k, k};
        if (testing::aux_write(leader, entry, sizeof entry) == core::AuxStream::Append::kOk) {
          written.store(k, std::memory_order_relaxed);
        }
      }
    });
    while (written.load() < 1000) std::this_thread::yield();
    int samples = 0;
    int checked_windows = 0;
    for (int round = 0; round < 200; ++round) {
      ASSERT_EQ(testing::fire(sampler, 1), 1u);
      for (const auto& r : ring.drain()) {
        if (testing::record_type(r) != PERF_RECORD_SAMPLE) continue;
        ++samples;
        const auto size = testing::field_at<std::uint64_t>(r, 8);
        ASSERT_EQ(size, 512u);
        // The window ends at an entry boundary (the write position); walk back entry by entry.
        expect_whole_entries(r, size);
        ++checked_windows;
      }
    }
    stop.store(true);
    writer.join();
    EXPECT_EQ(samples, 200);
    EXPECT_EQ(checked_windows, 200);
    if (ring::aux_bias_enabled()) {
      core::Event* ev = testing::engine().event(leader);
      const auto& w = static_cast<testing::TestAuxPmu*>(ev->pmu)->source_of(*ev)->stream.writer();
      EXPECT_TRUE(w.contended.load()) << "the writer owned the area and this thread revoked it";
      EXPECT_EQ(w.owner.load(), 0u);
    }
  }
  testing::event_close(sampler);
  testing::event_close(leader);
}

// The writer thread appends; signals sent to it sample the area from its own thread (through the
// biased path, possibly inside an unlocked store); then this thread samples too (revoking the
// bias).
struct SignalSampler {
  core::Event* sampler = nullptr;
  std::atomic<std::uint64_t> fired{0};
  std::atomic<std::uint64_t> inside_store{0};  // signals that landed inside the owner's store
  const ring::AuxWriter* writer = nullptr;
};
SignalSampler g_signal_sampler;

void on_sample_signal(int) {
  SignalSampler& s = g_signal_sampler;
  const std::uintptr_t busy = s.writer->busy.load(std::memory_order_relaxed);
  if (busy == (ring::aux_thread_token() | ring::AuxWriter::kAppending)) {
    s.inside_store.fetch_add(1, std::memory_order_relaxed);
  }
  const std::uint64_t n = static_cast<testing::TestPmu*>(s.sampler->pmu)
                              ->count(testing::engine(), *s.sampler, 1, core::SampleData{});
  s.fired.fetch_add(n, std::memory_order_relaxed);
}

TEST(AuxSampleConcurrency, SignalSamplesOnTheWritersThreadThenSamplesFromAnotherThread) {
  perf_event_attr lattr = testing::aux_attr();
  const int leader = testing::event_open(&lattr, 0, -1, -1, 0);
  ASSERT_GE(leader, 0);
  perf_event_attr sattr = testing::test_attr(PERF_SAMPLE_AUX);
  sattr.aux_sample_size = 512;
  const int sampler = testing::event_open(&sattr, 0, -1, leader, 0);
  ASSERT_GE(sampler, 0) << strerror(errno);
  {
    testing::MappedAux maps(leader, 4, 1, /*overwrite=*/true);
    testing::MappedRing ring(sampler, 256);  // 1 MiB: every sample of the test fits
    ASSERT_TRUE(maps.ok());
    ASSERT_EQ(testing::event_ioctl(leader, PERF_EVENT_IOC_ENABLE, 0), 0);
    core::Event* lev = testing::engine().event(leader);
    g_signal_sampler.sampler = testing::engine().event(sampler);
    g_signal_sampler.writer =
        &static_cast<testing::TestAuxPmu*>(lev->pmu)->source_of(*lev)->stream.writer();
    struct sigaction sa {};
    struct sigaction old {};
    sa.sa_handler = on_sample_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    ASSERT_EQ(sigaction(SIGUSR2, &sa, &old), 0);

    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> written{0};
    std::atomic<std::uintptr_t> writer_token{0};
    std::thread writer([&] {
      writer_token.store(ring::aux_thread_token());
      for (std::uint64_t k = 1; !stop.load(std::memory_order_relaxed); ++k) {
        const std::uint64_t entry[3] = {k, k, k};
        const auto r =
            static_cast<testing::TestAuxPmu*>(lev->pmu)->write(*lev, entry, sizeof entry);
        if (r == core::AuxStream::Append::kOk) written.store(k, std::memory_order_relaxed);
      }
    });
    while (written.load() < 1000) std::this_thread::yield();
    constexpr int kSignals = 300;
    auto send_signals = [&] {
      for (int i = 0; i < kSignals; ++i) {
        const std::uint64_t before = g_signal_sampler.fired.load();
        pthread_kill(writer.native_handle(), SIGUSR2);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (g_signal_sampler.fired.load() == before &&
               std::chrono::steady_clock::now() < deadline) {
          std::this_thread::yield();
        }
      }
    };
    send_signals();  // phase 1: only the writer's own thread samples
    const std::uint64_t phase1 = g_signal_sampler.fired.load();
    if (ring::aux_bias_enabled()) {
      EXPECT_EQ(g_signal_sampler.writer->owner.load(), writer_token.load())
          << "samples on the owner's thread do not revoke it";
      EXPECT_FALSE(g_signal_sampler.writer->contended.load());
    }
    std::thread other([&] {  // phase 2: another thread samples while signals still come
      for (int i = 0; i < 100; ++i) testing::fire(sampler, 1);
    });
    send_signals();
    other.join();
    stop.store(true);
    writer.join();
    sigaction(SIGUSR2, &old, nullptr);
    EXPECT_EQ(phase1, static_cast<std::uint64_t>(kSignals));
    EXPECT_EQ(g_signal_sampler.fired.load(), 2u * kSignals);
    int samples = 0;
    for (const auto& r : ring.drain()) {
      if (testing::record_type(r) != PERF_RECORD_SAMPLE) continue;
      ++samples;
      const auto size = testing::field_at<std::uint64_t>(r, 8);
      // Inside the writer's store a sample stays clear of its 24 bytes: the area holds 4096.
      ASSERT_EQ(size, 512u);
      expect_whole_entries(r, size);
    }
    EXPECT_EQ(samples, 2 * kSignals + 100);
    if (ring::aux_bias_enabled()) {
      EXPECT_TRUE(g_signal_sampler.writer->contended.load());
    }
    std::printf("signals inside the owner's store: %llu of %d\n",
                static_cast<unsigned long long>(g_signal_sampler.inside_store.load()), kSignals);
  }
  testing::event_close(sampler);
  testing::event_close(leader);
}

}  // namespace
}  // namespace userperf
