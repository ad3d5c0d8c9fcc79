#include "pmu/aux_sources/synthetic_pmu.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "trace/synthetic_format.hpp"

namespace userperf::pmu {

namespace {

constexpr std::uint64_t kDefaultChunk = 4096;
constexpr std::uint64_t kMaxChunk = 1 << 20;

struct SyntheticSource final : core::AuxSourcePmu::Source {
  SyntheticSource(core::Event& ev, core::GracePeriod& grace)
      : Source(ev, grace),
        rate(ev.attr.config),
        seed(ev.attr.config1),
        chunk(ev.attr.config2 != 0 ? ev.attr.config2 : kDefaultChunk),
        buffer(chunk) {}
  ~SyntheticSource() override { stop_thread(); }

  void stop_thread() {
    if (!thread.joinable()) return;
    {
      std::lock_guard lock(mutex);
      stop = true;
    }
    wake.notify_all();
    thread.join();
  }

  const std::uint64_t rate;
  const std::uint64_t seed;
  const std::uint64_t chunk;
  std::vector<std::uint8_t> buffer;  // the producer's chunk (one producer at a time)
  std::atomic<bool> producing{false};
  std::atomic<std::uint64_t> position{0};

  // The rate thread (engine lock for start/stop).
  std::thread thread;
  std::mutex mutex;
  std::condition_variable wake;
  bool stop = false;
};

SyntheticSource& synthetic(core::AuxSourcePmu::Source& source) {
  return static_cast<SyntheticSource&>(source);
}

std::uint64_t produce_on(SyntheticSource& s, std::uint64_t bytes) {
  if (s.producing.exchange(true, std::memory_order_acquire)) return 0;
  std::uint64_t done = 0;
  while (done < bytes) {
    const std::uint64_t n = std::min(s.chunk, (bytes - done + 7) & ~std::uint64_t{7});
    const std::uint64_t pos = s.position.load(std::memory_order_relaxed);
    trace::synthetic_fill(s.seed, pos, std::span(s.buffer.data(), n));
    if (s.stream.append(s.buffer.data(), n) != core::AuxStream::Append::kOk) break;
    s.position.store(pos + n, std::memory_order_relaxed);
    s.event.count.fetch_add(n, std::memory_order_relaxed);
    done += n;
  }
  s.producing.store(false, std::memory_order_release);
  return done;
}

// Produces at s.rate bytes per second, a chunk at a time, until told to stop. A producer that
// fell behind (a stopped process, a slow consumer) catches up by at most a tenth of a second.
void run_rate(SyntheticSource& s) {
  using Clock = std::chrono::steady_clock;
  const double per_ns = static_cast<double>(s.rate) / 1e9;
  const double max_budget =
      std::max(static_cast<double>(s.chunk), static_cast<double>(s.rate) / 10);
  double budget = 0;
  auto last = Clock::now();
  std::unique_lock lock(s.mutex);
  while (!s.stop) {
    const auto now = Clock::now();
    budget += per_ns * static_cast<double>(std::chrono::nanoseconds(now - last).count());
    budget = std::min(budget, max_budget);
    last = now;
    while (budget >= static_cast<double>(s.chunk) && !s.stop) {
      lock.unlock();
      produce_on(s, s.chunk);  // a chunk not stored is simply not part of the stream
      lock.lock();
      budget -= static_cast<double>(s.chunk);
    }
    const double wait_ns = (static_cast<double>(s.chunk) - budget) / per_ns;
    s.wake.wait_for(
        lock, std::chrono::nanoseconds(static_cast<std::int64_t>(std::clamp(wait_ns, 1e5, 1e8))));
  }
}

}  // namespace

int SyntheticPmu::event_init(core::Event& event) {
  const std::uint64_t chunk = event.attr.config2;
  if (chunk % 8 != 0 || chunk > kMaxChunk) return -EINVAL;
  return 0;
}

int SyntheticPmu::event_bind(core::Event& event) {
  attach(event, std::make_unique<SyntheticSource>(event, engine_.grace_period()));
  return 0;
}

std::uint64_t SyntheticPmu::produce(core::Event& event, std::uint64_t bytes) {
  Source* source = source_of(event);
  return source != nullptr ? produce_on(synthetic(*source), bytes) : 0;
}

std::uint64_t SyntheticPmu::position(core::Event& event) {
  Source* source = source_of(event);
  return source != nullptr ? synthetic(*source).position.load() : 0;
}

void SyntheticPmu::started(Source& source) {
  SyntheticSource& s = synthetic(source);
  if (s.rate == 0 || s.thread.joinable()) return;
  s.stop = false;
  s.thread = std::thread(run_rate, std::ref(s));
}

void SyntheticPmu::stopping(Source& source) {
  synthetic(source).stop_thread();
}

void SyntheticPmu::new_area(Source& source) {
  // A new area starts at AUX position 0, and so does the stream in it. Taking the producer's
  // place keeps a producer that began in the old area from storing in the new one.
  SyntheticSource& s = synthetic(source);
  while (s.producing.exchange(true, std::memory_order_acquire)) sched_yield();
  s.position.store(0, std::memory_order_relaxed);
  s.producing.store(false, std::memory_order_release);
}

}  // namespace userperf::pmu
