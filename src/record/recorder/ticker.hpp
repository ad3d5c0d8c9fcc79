// The recorder's ticker: it pokes the recorded programs' clocks between their scheduler ticks, so
// that a recorded program holds no thread of userperf's (pmu::ExternalTicker; docs/record.md,
// "Sampling"). Each sampled thread has a CPU-time timer that fires on its scheduler ticks (HZ: 250
// here) and counts its periods itself; a thread that timer finds busy and unpoked says so
// (BusyClockMessage), and from then on this ticker pokes it every period while it runs outside a
// system call, until it stops being busy.
//
// Busy, as the in-process ticker judges it: on a CPU or waiting for one for 3/4 of the time since
// the last look (/proc/PID/task/TID/schedstat), or on a CPU at both looks without having left it
// (schedstat's timeslice count unchanged: the running slice is not in its run time until the next
// tick). A poke goes only to a thread outside a system call (/proc/PID/task/TID/syscall says
// "running" or "-1"): in a blocking call the signal would end it with EINTR.
//
// A process that closed its connection to the recorder (a raw close_range) can no longer say busy:
// its threads are watched instead, looked at every period for as long as they live.
//
// One thread of the recorder; the main loop hands it busy threads and takes them back. The thread
// starts when the first one is handed over: until then it would have nothing to look at, and most
// recordings never have a busy thread (nor a short test of the recorder, which would wait for the
// thread's start and end).
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace userperf::record {

// A thread's clocks, as its ThreadStart named them.
struct ThreadClocks {
  struct Clock {
    std::uint32_t value = 0;  // si_value of its pokes
    std::uint64_t period_ns = 0;
  };
  pid_t pid = 0;
  pid_t tid = 0;
  int signo = 0;
  std::vector<Clock> clocks;
};

struct TickerStats {
  std::uint64_t pokes = 0;
  // Threads whose /proc/PID/task/TID/syscall could not be opened: poking them blind could end
  // their blocking calls with EINTR, so they are sampled on their scheduler ticks alone.
  std::uint32_t unpokable_threads = 0;
  int unpokable_errno = 0;
};

class Ticker {
 public:
  Ticker();
  ~Ticker();  // stops the thread, if it started
  Ticker(const Ticker&) = delete;
  Ticker& operator=(const Ticker&) = delete;

  // From the main loop: the thread said it is busy (BusyClockMessage), or is to be watched.
  void busy(const ThreadClocks& thread);
  void watch(const ThreadClocks& thread);
  // The thread ended: no poke reaches its tid again.
  void forget_thread(pid_t pid, pid_t tid);

  TickerStats stats();

 private:
  struct Thread;
  using Key = std::pair<pid_t, pid_t>;  // pid, tid

  // What a look at a thread decided: keep looking, drop it (gone, or no longer busy), or never
  // poke it (its /proc files or the signal are refused).
  enum class Verdict { kKeep, kDrop, kRefuse };

  // Queues a thread for the ticker thread, starting that thread the first time.
  void hand_over(const ThreadClocks& thread, bool watch);
  void run();
  // Looks at one thread and pokes it when due.
  Verdict look(Thread& t, std::uint64_t now);
  Verdict refuse(int err);

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  // Handed over by the main loop; taken by the ticker thread at its next pass.
  std::vector<std::pair<ThreadClocks, bool>> arrived_;  // bool: watch
  std::vector<Key> gone_threads_;
  TickerStats stats_;
  std::map<Key, Thread> threads_;  // ticker thread only
  std::thread thread_;             // not joinable until the first hand_over
};

}  // namespace userperf::record
