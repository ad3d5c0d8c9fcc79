// The write path's grace period (core/output_guard.hpp): synchronize() returns only after every
// writer that could have loaded an unpublished pointer has left, writers nested by a signal
// handler included, and is not held up by writers that entered after it began.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "core/output_guard.hpp"
#include "support/process_barrier.hpp"

namespace userperf::core {
namespace {

using namespace std::chrono_literals;

TEST(GracePeriod, SynchronizeWaitsForAWriterInside) {
  GracePeriod gp;
  std::atomic<bool> inside{false};
  std::atomic<bool> left{false};
  std::thread writer([&] {
    OutputGuard guard(gp);
    inside.store(true);
    std::this_thread::sleep_for(100ms);
    left.store(true);
  });
  while (!inside.load()) std::this_thread::yield();
  gp.synchronize();
  EXPECT_TRUE(left.load()) << "synchronize() returned while a writer was inside";
  writer.join();
}

TEST(GracePeriod, WritersThatEnterAfterwardsDoNotHoldItUp) {
  GracePeriod gp;
  std::atomic<bool> stop{false};
  // Always inside a guard but for an instant: only the phase lets synchronize() pass it.
  std::thread writer([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      OutputGuard guard(gp);
      for (int i = 0; i < 2000; ++i) std::atomic_signal_fence(std::memory_order_seq_cst);
    }
  });
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 200; ++i) gp.synchronize();
  const auto took = std::chrono::steady_clock::now() - start;
  stop.store(true);
  writer.join();
  EXPECT_LT(took, 20s);
}

// Readers on several threads, each also interrupted by its own timer signal whose handler reads
// too (a nested section), while the main thread swaps the published object, waits for a grace
// period and poisons the old one: no reader may ever see the poison.
struct Object {
  std::atomic<std::uint64_t> value{0};
};
constexpr std::uint64_t kLive = 0x1157;
constexpr std::uint64_t kPoison = 0xdead;

GracePeriod g_gp;
std::atomic<Object*> g_published{nullptr};
std::atomic<std::uint64_t> g_bad{0};
std::atomic<std::uint64_t> g_reads{0};

void read_published() {
  OutputGuard guard(g_gp);
  Object* object = g_published.load(std::memory_order_acquire);
  if (object == nullptr) return;
  for (int i = 0; i < 16; ++i) {
    if (object->value.load(std::memory_order_relaxed) != kLive) g_bad.fetch_add(1);
  }
  g_reads.fetch_add(1, std::memory_order_relaxed);
}

void read_in_handler(int) {
  const int saved = errno;
  read_published();
  errno = saved;
}

TEST(GracePeriod, NoReaderSeesAnObjectAfterItsGracePeriod) {
  struct sigaction sa {};
  sa.sa_handler = read_in_handler;
  sa.sa_flags = SA_RESTART;
  ASSERT_EQ(sigaction(SIGRTMIN + 6, &sa, nullptr), 0);
  std::vector<std::unique_ptr<Object>> objects;
  objects.push_back(std::make_unique<Object>());
  objects.back()->value.store(kLive);
  g_published.store(objects.back().get());
  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      sigevent sev{};
      sev.sigev_notify = SIGEV_THREAD_ID;
      sev.sigev_signo = SIGRTMIN + 6;
      sev._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
      timer_t timer;
      if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer) != 0) return;
      itimerspec spec{};
      spec.it_interval.tv_nsec = 50'000;
      spec.it_value.tv_nsec = 50'000;
      timer_settime(timer, 0, &spec, nullptr);
      while (!stop.load(std::memory_order_relaxed)) read_published();
      timer_delete(timer);
    });
  }
  while (g_reads.load() < 1000) std::this_thread::yield();  // the readers are running
  for (int round = 0; round < 300; ++round) {
    auto next = std::make_unique<Object>();
    next->value.store(kLive);
    Object* old = g_published.exchange(next.get(), std::memory_order_acq_rel);
    objects.push_back(std::move(next));
    g_gp.synchronize();
    old->value.store(kPoison, std::memory_order_relaxed);
  }
  stop.store(true);
  for (auto& t : readers) t.join();
  signal(SIGRTMIN + 6, SIG_DFL);
  EXPECT_EQ(g_bad.load(), 0u) << "a reader saw an object after its grace period ended";
  EXPECT_GT(g_reads.load(), 0u);
}

// A fork child has one thread: the parent's other writers' slots must not hold it up.
TEST(GracePeriod, AForkChildDoesNotWaitForItsParentsThreads) {
  GracePeriod gp;
  std::atomic<bool> inside{false};
  std::atomic<bool> release{false};
  std::thread writer([&] {
    OutputGuard guard(gp);
    inside.store(true);
    while (!release.load()) std::this_thread::sleep_for(1ms);
  });
  while (!inside.load()) std::this_thread::yield();
  { OutputGuard mine(gp); }  // this thread has a slot too, and keeps it in the child
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(10);  // a hang would otherwise outlive the test
    { OutputGuard mine(gp); }
    gp.synchronize();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  release.store(true);
  writer.join();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the child hung or died: " << status;
}

TEST(GracePeriod, ItsWritersTakeNoLockedInstructionWhereTheBarrierWorks) {
  // Not a timing test: the mechanism chosen. With the process barrier, a writer's entry is a slot
  // of its own; the shared counters are left alone (synchronize() flips them without waiting).
  if (!support::process_barrier_available()) GTEST_SKIP() << "no membarrier: shared counters";
  GracePeriod gp;
  const unsigned token = gp.enter();
  EXPECT_NE(detail::t_reader, nullptr);
  EXPECT_EQ(detail::t_reader->tid.load(), static_cast<pid_t>(syscall(SYS_gettid)));
  EXPECT_EQ(detail::t_reader->state & detail::kNestMask, 1u);
  {
    OutputGuard nested(gp);
    EXPECT_EQ(detail::t_reader->state & detail::kNestMask, 2u);
  }
  gp.leave(token);
  EXPECT_EQ(detail::t_reader->state & detail::kNestMask, 0u);
}

}  // namespace
}  // namespace userperf::core
