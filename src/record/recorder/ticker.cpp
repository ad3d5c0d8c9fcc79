#include "record/recorder/ticker.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "pmu/clock/clock_signal_value.hpp"
#include "support/monotonic_clock.hpp"

namespace userperf::record {

namespace {

using support::monotonic_ns;

// The ticker's timer slack: the default 50 us would stretch its 1 ms waits by 5%.
constexpr unsigned long kTimerSlackNs = 10'000;
// A thread not busy at this many looks in a row is dropped; its own timer says busy again when it
// is (after three unpoked periods of its CPU time).
constexpr int kQuietLooks = 8;
// Pokes between two reads of the thread's pending signals: a thread that blocks the clock signal
// (a raw rt_sigprocmask) gets at most this many queued, not one per period until RLIMIT_SIGPENDING.
constexpr std::uint32_t kPokesPerPendingCheck = 8;
constexpr std::uint64_t kMinPeriodNs = 100'000;  // no thread is looked at more often
// How far schedstat's run time may lag the thread's CPU time: its running slice is added at the
// next scheduler tick or switch (a tick is 10 ms at HZ=100, the slowest).
constexpr std::uint64_t kRunTimeLagNs = 10'000'000;

int open_task_file(pid_t pid, pid_t tid, const char* name) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/task/%d/%s", static_cast<int>(pid),
                static_cast<int>(tid), name);
  return open(path, O_RDONLY | O_CLOEXEC);
}

// A busy thread is looked at on a grid a little finer than its period (see run()).
std::uint64_t look_interval(std::uint64_t period_ns) {
  return period_ns - period_ns / 16;
}

ssize_t read_at_start(int fd, char* buf, std::size_t cap) {
  const ssize_t n = pread(fd, buf, cap - 1, 0);
  buf[n > 0 ? n : 0] = '\0';
  return n;
}

}  // namespace

struct Ticker::Thread {
  ThreadClocks clocks;
  std::uint64_t period_ns = 0;  // the shortest of its clocks'
  bool watched = false;         // never dropped for being quiet
  int syscall_fd = -1;
  int schedstat_fd = -1;
  std::uint64_t next_look = 0;
  bool looked = false;   // the baseline below is set
  bool outside = false;  // outside a system call at the last look
  std::uint64_t run_ns = 0, wait_ns = 0, slices = 0, wall_ns = 0;
  std::uint64_t first_run_ns = 0;  // schedstat's run time at the first look
  std::uint64_t poking_looks = 0;  // looks since then that poked
  int quiet_looks = 0;
  std::uint32_t unchecked_pokes = 0;
  bool signal_pending = false;  // the last poke is still queued: none is added until it is taken

  void close_files() {
    if (syscall_fd >= 0) close(syscall_fd);
    if (schedstat_fd >= 0) close(schedstat_fd);
    syscall_fd = schedstat_fd = -1;
  }
};

Ticker::Ticker() = default;

Ticker::~Ticker() {
  if (!thread_.joinable()) return;  // never started: no thread was handed over
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
  for (auto& [key, t] : threads_) t.close_files();
}

void Ticker::hand_over(const ThreadClocks& thread, bool watch) {
  {
    std::lock_guard lock(mutex_);
    arrived_.emplace_back(thread, watch);
    // The thread's run() takes the lock first: it finds this thread queued.
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  }
  wake_.notify_one();
}

void Ticker::busy(const ThreadClocks& thread) {
  hand_over(thread, false);
}

void Ticker::watch(const ThreadClocks& thread) {
  hand_over(thread, true);
}

void Ticker::forget_thread(pid_t pid, pid_t tid) {
  {
    std::lock_guard lock(mutex_);
    // Before the ticker thread started, no thread was handed over: none to forget.
    if (!thread_.joinable()) return;
    gone_threads_.emplace_back(pid, tid);
  }
  wake_.notify_one();
}

TickerStats Ticker::stats() {
  std::lock_guard lock(mutex_);
  return stats_;
}

// Whether the thread's clock signal is queued, from the SigPnd line of its status (a thread's own
// pending signals; a poke is queued to the thread).
bool signal_queued(pid_t pid, pid_t tid, int signo) {
  const int fd = open_task_file(pid, tid, "status");
  if (fd < 0) return false;
  char buf[4096];
  const ssize_t n = read_at_start(fd, buf, sizeof buf);
  close(fd);
  if (n <= 0) return false;
  const char* line = std::strstr(buf, "\nSigPnd:");
  if (line == nullptr || signo < 1 || signo > 64) return false;
  const std::uint64_t pending = std::strtoull(line + 8, nullptr, 16);
  return (pending >> (signo - 1) & 1) != 0;
}

Ticker::Verdict Ticker::look(Thread& t, std::uint64_t now) {
  const pid_t pid = t.clocks.pid, tid = t.clocks.tid;
  if (t.syscall_fd < 0) {
    t.syscall_fd = open_task_file(pid, tid, "syscall");
    if (t.syscall_fd < 0) {
      return errno == ENOENT || errno == ESRCH ? Verdict::kDrop : refuse(errno);
    }
    t.schedstat_fd = open_task_file(pid, tid, "schedstat");  // optional (CONFIG_SCHED_INFO)
  }
  char buf[128];
  if (read_at_start(t.syscall_fd, buf, sizeof buf) < 2) return Verdict::kDrop;  // it is gone
  const bool outside = std::strncmp(buf, "running", 7) == 0 || std::strncmp(buf, "-1", 2) == 0;
  std::uint64_t run = 0, wait = 0, slices = 0;
  const bool stats = t.schedstat_fd >= 0 && read_at_start(t.schedstat_fd, buf, sizeof buf) > 0 &&
                     std::sscanf(buf, "%lu %lu %lu", &run, &wait, &slices) == 3;
  bool busy = false;
  if (t.looked) {
    const std::uint64_t ran = run - t.run_ns, waited = wait - t.wait_ns;
    const std::uint64_t elapsed = now - t.wall_ns;
    // On a CPU at both looks without being scheduled in again: it never left (its running slice
    // reaches schedstat's run time only at the next tick).
    const bool continuous = t.outside && outside && (!stats || slices == t.slices);
    busy = continuous || (stats && (ran + waited) * 4 >= elapsed * 3);
  }
  if (!t.looked) t.first_run_ns = run;
  t.looked = true;
  t.outside = outside;
  t.run_ns = run;
  t.wait_ns = wait;
  t.slices = slices;
  t.wall_ns = now;
  if (!(outside && busy)) {
    return ++t.quiet_looks < kQuietLooks || t.watched ? Verdict::kKeep : Verdict::kDrop;
  }
  t.quiet_looks = 0;
  // At most a quarter more pokes than the CPU time it ran calls for, at one per look interval: a
  // thread waiting for a CPU (a neighbour on it) looks busy too, and its pokes would find less
  // than half a period pending. The quarter is room for pokes that come early on a thread that
  // runs (its run time lags by up to a tick, and the grid is finer than the period): a tighter
  // bound skipped 2% of the pokes two busy threads needed.
  if (stats && t.poking_looks * look_interval(t.period_ns) * 4 >
                   (run - t.first_run_ns) * 5 + kRunTimeLagNs * 4) {
    return Verdict::kKeep;
  }
  if (t.unchecked_pokes >= kPokesPerPendingCheck || t.signal_pending) {
    t.signal_pending = signal_queued(pid, tid, t.clocks.signo);
    t.unchecked_pokes = 0;
    if (t.signal_pending) return Verdict::kKeep;
  }
  for (const ThreadClocks::Clock& clock : t.clocks.clocks) {
    siginfo_t info{};
    info.si_signo = t.clocks.signo;
    info.si_code = SI_QUEUE;
    info.si_pid = getpid();
    info.si_uid = getuid();
    // Stamped with its run time (schedstat's, behind its CPU time by at most kRunTimeLagNs): the
    // handler tells a thread that ran on behind the poke (it blocked the signal) from one that
    // waited for a CPU.
    info.si_value.sival_ptr =
        reinterpret_cast<void*>(pmu::clock_poke(clock.value, stats ? run : 0));
    if (syscall(SYS_rt_tgsigqueueinfo, pid, tid, info.si_signo, &info) != 0) {
      if (errno == EAGAIN) return Verdict::kKeep;  // the user's signal queue is full: later
      return errno == ESRCH ? Verdict::kDrop : refuse(errno);
    }
    ++t.unchecked_pokes;
  }
  ++t.poking_looks;
  std::lock_guard lock(mutex_);
  stats_.pokes += t.clocks.clocks.size();
  return Verdict::kKeep;
}

Ticker::Verdict Ticker::refuse(int err) {
  std::lock_guard lock(mutex_);
  ++stats_.unpokable_threads;
  stats_.unpokable_errno = err;
  return Verdict::kRefuse;
}

void Ticker::run() {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  prctl(PR_SET_NAME, "userperf-tick");
  prctl(PR_SET_TIMERSLACK, kTimerSlackNs);
  std::set<Key> refused;  // threads that cannot be poked: not tried again
  std::unique_lock lock(mutex_);
  for (;;) {
    if (stop_) return;
    std::vector<std::pair<ThreadClocks, bool>> arrived;
    std::vector<Key> gone_threads;
    arrived.swap(arrived_);
    gone_threads.swap(gone_threads_);
    lock.unlock();

    for (const Key& key : gone_threads) {
      if (const auto it = threads_.find(key); it != threads_.end()) {
        it->second.close_files();
        threads_.erase(it);
      }
      refused.erase(key);
    }
    const std::uint64_t now = monotonic_ns();
    for (auto& [clocks, watch] : arrived) {
      const Key key{clocks.pid, clocks.tid};
      if (refused.count(key) != 0 || clocks.clocks.empty()) continue;
      Thread& t = threads_[key];
      t.period_ns = UINT64_MAX;
      for (const ThreadClocks::Clock& c : clocks.clocks)
        t.period_ns = std::min(t.period_ns, c.period_ns);
      t.period_ns = std::max(t.period_ns, kMinPeriodNs);
      t.clocks = std::move(clocks);
      t.watched = t.watched || watch;
      t.quiet_looks = 0;
      if (!t.looked) t.next_look = now;
    }
    std::uint64_t next = UINT64_MAX;
    // Whether any thread is due: then every thread at least halfway to its next look is looked at
    // too, so busy threads converge on one wakeup per period between them, not one each.
    bool due = false;
    for (const auto& [key, t] : threads_) due = due || now >= t.next_look;
    for (auto it = threads_.begin(); it != threads_.end();) {
      Thread& t = it->second;
      const std::uint64_t interval = look_interval(t.period_ns);
      if (now >= t.next_look || (due && now + interval / 2 >= t.next_look)) {
        const Verdict verdict = look(t, now);
        if (verdict != Verdict::kKeep) {
          if (verdict == Verdict::kRefuse) refused.insert(it->first);
          t.close_files();
          it = threads_.erase(it);
          continue;
        }
        // On a grid a little finer than the period, not `now + period`: the time each pass takes
        // and every late wakeup would add up, and a thread poked less often than once a period
        // has samples that stand for two (the handler rounds, so a poke early takes one period
        // and the next one, finding less than half a period, none).
        t.next_look = now < t.next_look || t.next_look + interval <= now ? now + interval
                                                                         : t.next_look + interval;
      }
      next = std::min(next, t.next_look);
      ++it;
    }
    lock.lock();
    if (stop_ || !arrived_.empty() || !gone_threads_.empty()) continue;
    if (next == UINT64_MAX) {
      wake_.wait(lock);
    } else {
      const std::uint64_t wait = next > monotonic_ns() ? next - monotonic_ns() : 0;
      wake_.wait_for(lock, std::chrono::nanoseconds(wait));
    }
  }
}

}  // namespace userperf::record
