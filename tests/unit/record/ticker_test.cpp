// The recorder's ticker (record/recorder/ticker.hpp) against a real child process: a busy thread is
// poked about once a period with the clock's value and a send time; one blocked in a system call is
// never poked (a poke would end its nanosleep with EINTR); a thread that blocks the signal gets a
// few pokes queued, not one per period; a forgotten thread gets no more; the ticker's own thread
// starts only when a thread is handed over.
#include "record/recorder/ticker.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include "pmu/clock/clock_signal_value.hpp"
#include "support/monotonic_clock.hpp"

namespace userperf::record {
namespace {

constexpr std::uint64_t kPeriodNs = 1'000'000;
constexpr std::uint32_t kClock = 0x7005;  // slot 5, generation 7

// What the child saw, in memory it shares with the test.
struct Seen {
  std::atomic<int> pokes{0};
  std::atomic<int> foreign{0};      // signals with another value or sender
  std::atomic<int> interrupted{0};  // nanosleeps that returned EINTR
  std::atomic<int> stamped{0};      // pokes carrying a send time
  std::atomic<pid_t> sender{0};
  std::atomic<bool> ready{false};  // the child's handler (and mask) are in place
};

Seen* g_seen = nullptr;

void on_poke(int, siginfo_t* info, void*) {
  const auto value = reinterpret_cast<std::uint64_t>(info->si_value.sival_ptr);
  if (info->si_code != SI_QUEUE || info->si_pid != g_seen->sender.load() ||
      (value & 0xffffffffu) != kClock) {
    g_seen->foreign.fetch_add(1);
    return;
  }
  g_seen->pokes.fetch_add(1);
  if (value >> 32 != 0) g_seen->stamped.fetch_add(1);
}

std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

enum class Behaviour { kSpin, kSleep, kBlockAndSpin, kSpinOnCpu0 };

void pin_to_cpu0() {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  sched_setaffinity(0, sizeof one, &one);
}

// Forks a child that behaves so for `ms` milliseconds, with its handler installed; returns once it
// is (a poke before it would kill the child, as a recorder never pokes before Hello).
pid_t start_child(Seen* seen, Behaviour behaviour, int ms) {
  const int signo = SIGRTMIN + 4;
  const pid_t child = fork();
  if (child != 0) {
    while (child > 0 && !seen->ready.load()) sched_yield();
    return child;
  }
  g_seen = seen;
  struct sigaction sa {};
  sa.sa_sigaction = on_poke;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(signo, &sa, nullptr);
  if (behaviour == Behaviour::kBlockAndSpin) {
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, signo);
    sigprocmask(SIG_BLOCK, &only, nullptr);
  }
  if (behaviour == Behaviour::kSpinOnCpu0) pin_to_cpu0();
  seen->ready.store(true);
  if (behaviour == Behaviour::kSleep) {
    timespec rest{ms / 1000, (ms % 1000) * 1'000'000L};
    while (nanosleep(&rest, &rest) != 0) {
      if (errno == EINTR) seen->interrupted.fetch_add(1);
    }
  } else {
    const std::uint64_t end = thread_cpu_ns() + static_cast<std::uint64_t>(ms) * 1'000'000u;
    volatile std::uint64_t sink = 0;
    while (thread_cpu_ns() < end) {
      for (int i = 0; i < 200'000; ++i) sink = sink + static_cast<unsigned>(i);
    }
  }
  _exit(0);
}

ThreadClocks clocks_of(pid_t child) {
  return ThreadClocks{child, child, SIGRTMIN + 4, {{kClock, kPeriodNs}}};
}

class TickerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    void* shared =
        mmap(nullptr, sizeof(Seen), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(shared, MAP_FAILED);
    seen_ = new (shared) Seen();
    seen_->sender.store(getpid());
  }
  void TearDown() override { munmap(seen_, sizeof(Seen)); }

  int wait_child(pid_t child) {
    int status = 0;
    EXPECT_EQ(waitpid(child, &status, 0), child);
    return status;
  }

  Seen* seen_ = nullptr;
};

TEST_F(TickerTest, BusyThreadIsPokedAboutOncePerPeriod) {
  const pid_t child = start_child(seen_, Behaviour::kSpin, 400);
  Ticker ticker;
  ticker.busy(clocks_of(child));
  EXPECT_EQ(wait_child(child), 0);
  // 400 ms of CPU at 1 ms: a few looks go to the baseline, and a ticker that shares 2 CPUs with
  // the spinner and the test wakes late now and then. Alone, about 430 pokes (one per look
  // interval of 15/16 ms); beside busy neighbours the child waits for its CPU and looks busy all
  // the same, and the bound holds the pokes to a quarter above its CPU time: (500 + 10) / 0.9375.
  EXPECT_GE(seen_->pokes.load(), 200);
  EXPECT_LE(seen_->pokes.load(), 546);
  EXPECT_EQ(seen_->stamped.load(), seen_->pokes.load()) << "every poke says when it was sent";
  EXPECT_EQ(seen_->foreign.load(), 0);
  EXPECT_GE(ticker.stats().pokes, static_cast<std::uint64_t>(seen_->pokes.load()));
}

TEST_F(TickerTest, ThreadThatWaitsForItsCpuIsPokedForTheTimeItRan) {
  // A spinner shares CPU 0 with the child: the child is runnable all along but runs about half
  // the time. Pokes follow its CPU time (200 ms: 213 look intervals, a quarter more allowed), not
  // the wall time (about 420 without the bound).
  const pid_t rival = fork();
  if (rival == 0) {
    pin_to_cpu0();
    volatile std::uint64_t sink = 0;
    for (;;) sink = sink + 1;
  }
  ASSERT_GT(rival, 0);
  const pid_t child = start_child(seen_, Behaviour::kSpinOnCpu0, 200);
  const std::uint64_t wall_start = support::monotonic_ns();
  Ticker ticker;
  ticker.busy(clocks_of(child));
  EXPECT_EQ(wait_child(child), 0);
  const std::uint64_t wall_ms = (support::monotonic_ns() - wall_start) / 1'000'000;
  kill(rival, SIGKILL);
  waitpid(rival, nullptr, 0);
  if (wall_ms < 300) GTEST_SKIP() << "the child had CPU 0 to itself (" << wall_ms << " ms)";
  EXPECT_GE(seen_->pokes.load(), 100);
  EXPECT_LE(seen_->pokes.load(), 213 * 5 / 4 + 12) << "in " << wall_ms << " ms";
}

TEST_F(TickerTest, ThreadInABlockingCallIsNeverPoked) {
  const pid_t child = start_child(seen_, Behaviour::kSleep, 300);
  Ticker ticker;
  ticker.busy(clocks_of(child));  // it said so, but it sleeps: looked at, never poked
  EXPECT_EQ(wait_child(child), 0);
  EXPECT_EQ(seen_->pokes.load(), 0);
  EXPECT_EQ(seen_->interrupted.load(), 0) << "a poke ended its nanosleep";
}

TEST_F(TickerTest, ThreadThatBlocksTheSignalGetsAFewQueued) {
  const pid_t child = start_child(seen_, Behaviour::kBlockAndSpin, 300);
  Ticker ticker;
  ticker.busy(clocks_of(child));
  // The child exits with the signal blocked: count what the ticker sent instead.
  EXPECT_EQ(wait_child(child), 0);
  EXPECT_EQ(seen_->pokes.load(), 0);
  EXPECT_LE(ticker.stats().pokes, 16u) << "one poke per period queued behind the mask";
  EXPECT_GE(ticker.stats().pokes, 1u);
}

TEST_F(TickerTest, ForgottenThreadIsPokedNoMore) {
  const pid_t child = start_child(seen_, Behaviour::kSpin, 400);
  Ticker ticker;
  ticker.busy(clocks_of(child));
  timespec pause{0, 100'000'000};
  nanosleep(&pause, nullptr);
  ticker.forget_thread(child, child);
  nanosleep(&pause, nullptr);  // the ticker takes the news at its next pass
  const int after = seen_->pokes.load();
  EXPECT_GT(after, 0);
  EXPECT_EQ(wait_child(child), 0);
  EXPECT_LE(seen_->pokes.load(), after + 2);
}

// The ticker's thread starts with the first thread handed over: a recording with no busy thread
// has none, and its end waits for none. (A pid above PID_MAX_LIMIT: the ticker drops it at once.)
TEST(TickerThread, StartsAtTheFirstThreadHandedOver) {
  const auto threads = [] {
    std::size_t n = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
      (void)entry;
      ++n;
    }
    return n;
  };
  const std::size_t before = threads();
  {
    Ticker ticker;
    ticker.forget_thread(4194305, 4194305);
    EXPECT_EQ(threads(), before);
    EXPECT_EQ(ticker.stats().pokes, 0u);
    ticker.busy(ThreadClocks{4194305, 4194305, SIGRTMIN + 4, {{kClock, kPeriodNs}}});
    EXPECT_EQ(threads(), before + 1);
  }
  // Joined; the kernel may list the thread a moment longer.
  for (int i = 0; i < 1000 && threads() != before; ++i) usleep(1000);
  EXPECT_EQ(threads(), before);
}

}  // namespace
}  // namespace userperf::record
