// End to end: ringbuf_samples.bpf.c reserves and submits one BPF_MAP_TYPE_RINGBUF record per
// task-clock overflow of this thread; a second thread consumes them through the C API
// (userperf_ring_buffer_*), sleeping in poll until the program's submits wake it. The records
// received are checked against the samples the event wrote and the program's own counts.
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "support/test_events.hpp"
#include "userperf/userperf.h"

namespace userperf::testing {
namespace {

std::string object_path(const char* name) {
  return std::string(USERPERF_BPF_OBJECT_DIR) + "/progs/" + name + ".bpf.o";
}

struct SampleRecord {
  std::uint32_t pid;
  std::uint32_t tid;
  std::uint64_t period;
  std::uint64_t seq;
  std::uint64_t ring_size;
};

struct Received {
  std::vector<SampleRecord> records;
  std::atomic<std::uint64_t> count{0};
  bool sizes_ok = true;
};

int on_record(void* ctx, void* data, size_t size) {
  auto* received = static_cast<Received*>(ctx);
  if (size != sizeof(SampleRecord)) received->sizes_ok = false;
  SampleRecord rec{};
  std::memcpy(&rec, data, std::min(size, sizeof rec));
  received->records.push_back(rec);
  received->count.fetch_add(1);
  return 0;
}

std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t stat(int stats_fd, std::uint32_t key) {
  std::uint64_t value = 0;
  EXPECT_EQ(userperf_bpf_map_lookup_elem(stats_fd, &key, &value), 0) << strerror(errno);
  return value;
}

TEST(RingbufEndToEnd, OneRecordPerSampleReachesThePollingConsumer) {
  char log[16384] = {};
  const int prog =
      userperf_bpf_prog_load(object_path("ringbuf_samples").c_str(), "on_sample", log, sizeof log);
  ASSERT_GE(prog, 0) << strerror(errno) << "\n" << log;
  const int events = userperf_bpf_map_fd(prog, "events");
  const int stats = userperf_bpf_map_fd(prog, "stats");
  ASSERT_GE(events, 0);
  ASSERT_GE(stats, 0);
  EXPECT_EQ(userperf_ring_buffer_new(stats, on_record, nullptr), nullptr);  // not a RINGBUF
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(userperf_ring_buffer_new(-1, on_record, nullptr), nullptr);
  EXPECT_EQ(errno, EBADF);

  Received received;
  userperf_ring_buffer* rb = userperf_ring_buffer_new(events, on_record, &received);
  ASSERT_NE(rb, nullptr) << strerror(errno);
  // Nothing yet: poll sleeps its whole timeout and consumes nothing.
  const auto before = std::chrono::steady_clock::now();
  EXPECT_EQ(userperf_ring_buffer_poll(rb, 50), 0);
  EXPECT_GE(std::chrono::steady_clock::now() - before, std::chrono::milliseconds(45));

  std::atomic<bool> stop{false};
  std::atomic<int> polls_with_data{0};
  std::thread consumer([&] {
    while (!stop.load()) {
      const int n = userperf_ring_buffer_poll(rb, 1000);
      if (n > 0) polls_with_data.fetch_add(1);
    }
  });

  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  // 0.2 ms of this thread's CPU time (a sample's period is larger when the clock's tick covered
  // several periods)
  attr.sample_period = 200'000;
  attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD;
  attr.disabled = 1;
  const int event = userperf_perf_event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(event, 0) << strerror(errno);
  std::vector<std::uint64_t> sample_periods;  // of the perf ring's samples, in order
  {
    MappedRing ring(event, 256);
    ASSERT_TRUE(ring.ok());
    ASSERT_EQ(userperf_ioctl(event, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog)), 0)
        << strerror(errno);
    ASSERT_EQ(userperf_ioctl(event, PERF_EVENT_IOC_ENABLE, 0), 0);
    const std::uint64_t end = thread_cpu_ns() + 200'000'000;
    volatile std::uint64_t sink = 0;
    while (thread_cpu_ns() < end) sink = sink + 1;
    ASSERT_EQ(userperf_ioctl(event, PERF_EVENT_IOC_DISABLE, 0), 0);

    std::uint64_t samples = 0;
    std::uint64_t lost = 0;
    for (const auto& rec : ring.drain()) {
      if (record_type(rec) == PERF_RECORD_SAMPLE) {
        ++samples;
        sample_periods.push_back(field_at<std::uint64_t>(rec, 8 + 8));  // after pid, tid
      }
      if (record_type(rec) == PERF_RECORD_LOST) lost += field_at<std::uint64_t>(rec, 16);
    }
    const std::uint64_t runs = stat(stats, 0);
    const std::uint64_t failed = stat(stats, 1);
    const std::uint64_t discarded = stat(stats, 2);
    EXPECT_EQ(lost, 0u);
    EXPECT_GT(samples, 10u);
    EXPECT_EQ(runs, samples);  // the program ran once per sample and kept each
    EXPECT_EQ(failed, 0u);     // 64 KiB of 40-byte records: the consumer keeps up
    EXPECT_EQ(discarded, runs / 5);
    const std::uint64_t expected = runs - failed - discarded;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (received.count.load() < expected && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    stop = true;
    consumer.join();
    EXPECT_EQ(received.count.load(), expected);
    EXPECT_GT(polls_with_data.load(), 1);  // woken repeatedly while samples came in
  }
  // The records: this thread's, in order, the discarded ones (seq % 5 == 4) missing.
  EXPECT_TRUE(received.sizes_ok);
  const auto tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
  std::uint64_t next_seq = 0;
  for (const SampleRecord& rec : received.records) {
    EXPECT_EQ(rec.pid, static_cast<std::uint32_t>(getpid()));
    EXPECT_EQ(rec.tid, tid);
    // The program saw the period of the sample it ran for (seq counts the runs).
    ASSERT_LT(rec.seq, sample_periods.size());
    EXPECT_EQ(rec.period, sample_periods[rec.seq]);
    EXPECT_EQ(rec.period % 200'000u, 0u);
    EXPECT_EQ(rec.ring_size, 64u * 1024);
    EXPECT_NE(rec.seq % 5, 4u);
    EXPECT_GE(rec.seq, next_seq);
    next_seq = rec.seq + 1;
  }
  EXPECT_EQ(userperf_ring_buffer_consume(rb), 0);  // everything was consumed
  userperf_ring_buffer_free(rb);
  userperf_close(event);
  userperf_close(events);
  userperf_close(stats);
  userperf_close(prog);
}

}  // namespace
}  // namespace userperf::testing
