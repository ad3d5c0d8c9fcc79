// The ticker thread and its arming. Not the write path: the ticker may block, read /proc and make
// syscalls; it shares slot state with the signal handler and the control path through atomics.
#include "pmu/clock/clock_ticker.hpp"
#include "support/descriptors.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "pmu/clock/clock_slots.hpp"
#include "pmu/clock/clock_timer.hpp"
#include "pmu/internal_thread.hpp"
#include "support/monotonic_clock.hpp"
#include "support/task_ids.hpp"

namespace userperf::pmu {

namespace {

constexpr std::uint64_t kNsecPerSec = 1'000'000'000;
// The ticker's timer slack: the default 50 us would stretch a 100 us sleep by half.
constexpr unsigned long kTimerSlackNs = 10'000;

// Per slot, touched by the ticker thread only.
struct TickerSlotState {
  std::uint32_t seen_arm_seq = 0;
  std::uint64_t last_cpu_ns = 0;   // the thread's CPU time at the previous poll
  std::uint64_t last_wall_ns = 0;  // CLOCK_MONOTONIC at the previous poll
  std::uint64_t last_wait_ns = 0;  // its time runnable but not running, at the previous poll
  std::uint32_t sent = 0;          // pokes sent, against ClockSlot::ticker_delivered
};

// A thread is busy when, since the previous poll, it was running or runnable (waiting for a CPU
// that other threads hold) for 3/4 of the wall time: a thread that wakes, runs a few microseconds
// and blocks again is not.
constexpr std::uint64_t kBusyNumerator = 3;
constexpr std::uint64_t kBusyDenominator = 4;
// A thread that is never busy at a poll (short bursts between blocking calls, yet CPU time adding
// up) is signalled while 'R' once this much is pending: what a CPU-time timer would give it at HZ
// 100, the lowest common HZ.
constexpr std::uint64_t kMaxDeferredNs = 10'000'000;

std::array<TickerSlotState, kClockSlots> g_state;
// Bumped on every arm; the ticker sleeps on it (futex) until its next deadline, or for good while
// nothing is armed.
std::atomic<std::uint32_t> g_wake{0};
// Odd while the ticker scans the slots: ticker_disarm waits for an odd value to move on.
std::atomic<std::uint64_t> g_pass{0};
std::atomic<bool> g_started{false};
// Bumped by ticker_signals_discarded; the ticker resynchronises every slot when it moves.
std::atomic<std::uint32_t> g_discard_seq{0};
std::uint32_t g_seen_discard_seq = 0;  // the ticker thread's

static_assert(sizeof(g_wake) == sizeof(std::uint32_t) && decltype(g_wake)::is_always_lock_free);

std::uint32_t* futex_word() {
  return reinterpret_cast<std::uint32_t*>(&g_wake);
}

// Sleeps while g_wake == seen, until `deadline` (absolute CLOCK_MONOTONIC) when given.
void wait_for_wake(std::uint32_t seen, const timespec* deadline) {
  syscall(SYS_futex, futex_word(), FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, seen, deadline, nullptr,
          FUTEX_BITSET_MATCH_ANY);
}

void wake_ticker() {
  g_wake.fetch_add(1, std::memory_order_seq_cst);
  syscall(SYS_futex, futex_word(), FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, nullptr, nullptr, 0);
}

using support::monotonic_ns;

// The CPU time `tid` (a thread of this process) has used; false when the thread is gone.
bool read_thread_cpu_ns(pid_t tid, std::uint64_t& ns) {
  timespec ts{};
  if (clock_gettime(thread_cpu_clock(tid), &ts) != 0) return false;
  ns = static_cast<std::uint64_t>(ts.tv_sec) * kNsecPerSec + static_cast<std::uint64_t>(ts.tv_nsec);
  return true;
}

// Whether a signal now would find the thread outside a system call: /proc/self/task/TID/syscall
// says "running" while it is on a CPU, "-1 ..." when it is off one but not in a system call
// (preempted in user code), and the call's number when it is inside one - blocked in nanosleep or
// poll, or preempted on its way in, where a signal would end the call with EINTR.
int open_task_file(std::atomic<int>& fd, pid_t tid, const char* name);
void close_task_file(std::atomic<int>& fd);

// pread of the slot's /proc/self/task/TID/NAME file. A program that closed it behind userperf's
// back (a raw close_range: support/descriptors.hpp) gets it reopened once, rather than a thread
// that is never signalled again.
ssize_t read_task_file(std::atomic<int>& fd, pid_t tid, const char* name, char* buf,
                       std::size_t cap) {
  ssize_t n = pread(fd.load(std::memory_order_relaxed), buf, cap, 0);
  if (n < 0 && errno == EBADF && fd.load(std::memory_order_relaxed) >= 0) {
    close_task_file(fd);
    if (open_task_file(fd, tid, name) == 0)
      n = pread(fd.load(std::memory_order_relaxed), buf, cap, 0);
  }
  return n;
}

bool outside_system_call(ClockSlot& slot) {
  char buf[16];
  const ssize_t n = read_task_file(slot.syscall_fd, slot.tid.load(std::memory_order_relaxed),
                                   "syscall", buf, sizeof buf);
  if (n < 2) return false;
  return std::memcmp(buf, "-1", 2) == 0 || (n >= 7 && std::memcmp(buf, "running", 7) == 0);
}

// The time the thread spent runnable but waiting for a CPU (/proc/self/task/TID/schedstat: "run
// wait slices"); 0 when the kernel has no schedstat.
std::uint64_t runqueue_wait_ns(ClockSlot& slot) {
  char buf[96];
  const ssize_t n =
      slot.schedstat_fd.load(std::memory_order_relaxed) < 0
          ? -1
          : read_task_file(slot.schedstat_fd, slot.tid.load(std::memory_order_relaxed), "schedstat",
                           buf, sizeof buf - 1);
  if (n <= 0) return 0;
  buf[n] = '\0';
  char* end = nullptr;
  std::strtoull(buf, &end, 10);
  return std::strtoull(end, nullptr, 10);
}

bool poke(int index, pid_t tid, std::uint32_t generation) {
  siginfo_t info{};
  info.si_signo = clock_signal();
  // SI_TIMER, as the timers' own signals: exec discards those still queued (the kernel's
  // flush_itimer_signals, once every other thread, this one too, is gone), so a poke that races a
  // thread's exec never reaches the new program, whose disposition of the signal is the default
  // (terminate).
  info.si_code = SI_TIMER;
  info.si_timerid = kOwnTickerTimerId;
  // Stamped with the thread's CPU time: the handler tells a thread that ran on behind the poke
  // (it blocked the signal) from one that waited for a CPU.
  timespec cpu{};
  const std::uint32_t stamp =
      clock_gettime(thread_cpu_clock(tid), &cpu) == 0
          ? clock_signal_stamp(static_cast<std::uint64_t>(cpu.tv_sec) * 1'000'000'000u +
                               static_cast<std::uint64_t>(cpu.tv_nsec))
          : 0;
  info.si_value.sival_ptr = encode_clock_signal({index, generation, stamp});
  return syscall(SYS_rt_tgsigqueueinfo, support::current_pid(), tid, info.si_signo, &info) == 0;
}

// When to poll a thread that still needs `remaining` CPU time for a period: at the CPU share it
// had since the previous poll it cannot cross sooner (a busy thread: after `remaining`; a thread
// that shares its CPU: later), and never later than a period (nor sooner than the ticker's floor).
std::uint64_t next_poll_in(std::uint64_t remaining, std::uint64_t ran, std::uint64_t elapsed,
                           std::uint64_t period) {
  if (ran == 0) return period;
  const auto predicted =
      static_cast<std::uint64_t>(static_cast<unsigned __int128>(remaining) * elapsed / ran);
  return std::max(std::min(predicted, period), kTickerMinSleepNs);
}

// Pokes one armed slot's thread when a period is due. Returns how long until the slot should be
// polled again.
//
// Due means half a period or more of CPU time the thread's samples do not yet stand for (the
// handler's account, ClockSlot::accounted_cpu_ns): a thread polled because another one was due is
// poked in the same wakeup when it is at least halfway there, and its sample rounds to whole
// periods. Threads that run at once so converge on one wakeup per period, not one each.
//
// A signal to a thread blocked in nanosleep, poll, epoll_wait... ends that call with EINTR even
// under SA_RESTART (signal(7)), which would change the program. So a due thread is poked only when
// it was busy since the previous poll (kBusyNumerator) and is not inside a system call now
// (/proc/self/task/TID/syscall). One that is keeps its pending time (the PERIOD of its next
// sample covers every period it used) and is polled again 100 us later if it ran at all, else a
// period later. The window that remains: a thread running on a CPU that enters a blocking call
// between that read and the signal's delivery (a few microseconds) sees EINTR. One poke is kept in
// flight: a thread that blocks the signal gets one, not one per period (the handler counts the
// periods it could not take when the poke arrives).
std::uint64_t poll_slot(int index, ClockSlot& slot, TickerSlotState& state, std::uint64_t period) {
  const pid_t tid = slot.tid.load(std::memory_order_relaxed);
  std::uint64_t cpu = 0;
  if (!read_thread_cpu_ns(tid, cpu)) return period;  // the thread is gone; its owner disarms
  const std::uint64_t wall = monotonic_ns();
  const std::uint64_t wait = runqueue_wait_ns(slot);
  const std::uint64_t ran = cpu > state.last_cpu_ns ? cpu - state.last_cpu_ns : 0;
  const std::uint64_t waited = wait > state.last_wait_ns ? wait - state.last_wait_ns : 0;
  const std::uint64_t elapsed = wall - state.last_wall_ns;
  state.last_cpu_ns = std::max(cpu, state.last_cpu_ns);
  state.last_wait_ns = std::max(wait, state.last_wait_ns);
  state.last_wall_ns = wall;
  const auto pending =
      static_cast<std::int64_t>(cpu - slot.accounted_cpu_ns.load(std::memory_order_relaxed));
  const auto signed_period = static_cast<std::int64_t>(period);
  // Until a whole period is pending: the next wakeup is planned for that, not for the halfway
  // point at which another slot's wakeup may take this one along.
  const auto until_due = [&] {
    const std::int64_t remaining = std::max<std::int64_t>(signed_period - pending, 0);
    return next_poll_in(static_cast<std::uint64_t>(remaining), ran, elapsed, period);
  };
  if (pending * 2 < signed_period) return until_due();
  const std::uint64_t not_now = ran > 0 ? kTickerMinSleepNs : period;
  const bool busy = (ran + waited) * kBusyDenominator >= elapsed * kBusyNumerator ||
                    pending >= static_cast<std::int64_t>(kMaxDeferredNs);
  if (!busy) return pending < signed_period ? until_due() : not_now;
  const std::uint32_t delivered = slot.ticker_delivered.load(std::memory_order_acquire);
  const auto in_flight = static_cast<std::int32_t>(state.sent - delivered);
  // The thread blocks the signal, is in a long system call, or has not run since.
  if (in_flight > 0) return period;
  // More delivered than sent: a resynchronisation counted one that was only late. Forget it, so
  // that the next one in flight counts.
  if (in_flight < 0) state.sent = delivered;
  if (!outside_system_call(slot)) return pending < signed_period ? until_due() : not_now;
  if (poke(index, tid, slot.generation.load(std::memory_order_relaxed))) ++state.sent;
  // The handler takes the pending time: the next period is due a period of CPU from now.
  return next_poll_in(period, ran, elapsed, period);
}

// One pass over the slots. Returns the time until the earliest armed slot could be due, 0 when
// none is armed.
std::uint64_t scan_slots() {
  std::uint64_t next = 0;
  // Signals discarded (ticker_signals_discarded) will never be delivered: stop waiting for them.
  // One that was only late is delivered on top; poll_slot absorbs it.
  const std::uint32_t discard_seq = g_discard_seq.load(std::memory_order_acquire);
  const bool resync = discard_seq != g_seen_discard_seq;
  g_seen_discard_seq = discard_seq;
  const int end = g_clock_slot_end.load(std::memory_order_acquire);
  for (int i = 0; i < end; ++i) {
    ClockSlot& slot = g_clock_slots[i];
    // The period first: an arm publishes its baseline (arm_seq) before its period.
    const std::uint64_t period = slot.ticker_period.load(std::memory_order_seq_cst);
    if (period == 0) continue;
    TickerSlotState& state = g_state[i];
    const std::uint32_t seq = slot.arm_seq.load(std::memory_order_acquire);
    if (state.seen_arm_seq != seq) {
      state.seen_arm_seq = seq;
      state.last_cpu_ns = slot.armed_cpu_ns.load(std::memory_order_relaxed);
      state.last_wall_ns = slot.armed_wall_ns.load(std::memory_order_relaxed);
      state.last_wait_ns = runqueue_wait_ns(slot);
      state.sent = slot.ticker_delivered.load(std::memory_order_acquire);
    }
    if (resync) state.sent = slot.ticker_delivered.load(std::memory_order_acquire);
    const std::uint64_t wait = poll_slot(i, slot, state, period);
    next = next == 0 ? wait : std::min(next, wait);
  }
  return next;
}

// Wakes when the earliest armed thread could have used a whole period (a thread uses CPU time no
// faster than wall time), so a busy thread gets one signal per period and an idle one costs a CPU
// clock read per period.
void* ticker_main(void*) {
  prctl(PR_SET_NAME, kTickerThreadName);
  prctl(PR_SET_TIMERSLACK, kTimerSlackNs);
  for (;;) {
    const std::uint32_t seen = g_wake.load(std::memory_order_seq_cst);
    const std::uint64_t start = monotonic_ns();
    g_pass.fetch_add(1, std::memory_order_seq_cst);
    const std::uint64_t wait = scan_slots();
    g_pass.fetch_add(1, std::memory_order_seq_cst);
    if (wait == 0) {
      wait_for_wake(seen, nullptr);
      continue;
    }
    const std::uint64_t at = start + wait;
    const timespec deadline{static_cast<time_t>(at / kNsecPerSec),
                            static_cast<long>(at % kNsecPerSec)};
    wait_for_wake(seen, &deadline);
  }
  return nullptr;
}

// Returns once no pass that might have seen a slot's old period is running.
void wait_for_pass() {
  const std::uint64_t pass = g_pass.load(std::memory_order_seq_cst);
  if ((pass & 1) == 0) return;
  while (g_pass.load(std::memory_order_seq_cst) == pass) {
    const timespec pause{0, 20'000};
    nanosleep(&pause, nullptr);
  }
}

// Creates the ticker thread with every signal blocked (it inherits the mask), inside an
// InternalThreadScope so that the agent does not sample it.
int start_ticker() {
  bool expected = false;
  if (!g_started.compare_exchange_strong(expected, true)) return 0;
  // The scope covers the mask changes too: the agent's mask wrappers leave them alone.
  InternalThreadScope scope;
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  const int err = pthread_create(&thread, &attr, ticker_main, nullptr);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (err != 0) g_started.store(false);
  return -err;
}

// Opens /proc/self/task/TID/NAME into `fd` unless already open. Returns 0 or -errno.
int open_task_file(std::atomic<int>& fd, pid_t tid, const char* name) {
  if (fd.load(std::memory_order_relaxed) >= 0) return 0;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/%s", static_cast<int>(tid), name);
  const int opened = support::place_descriptor(open(path, O_RDONLY | O_CLOEXEC));
  if (opened < 0) return -errno;
  fd.store(opened, std::memory_order_relaxed);
  return 0;
}

void close_task_file(std::atomic<int>& fd) {
  const int old = fd.exchange(-1, std::memory_order_relaxed);
  if (old >= 0) close(old);
}

}  // namespace

int ticker_arm(int index, std::uint64_t period_ns) {
  ClockSlot& slot = g_clock_slots[index];
  const pid_t tid = slot.tid.load(std::memory_order_relaxed);
  if (const int err = open_task_file(slot.syscall_fd, tid, "syscall"); err != 0) return err;
  open_task_file(slot.schedstat_fd, tid, "schedstat");  // optional (CONFIG_SCHED_INFO)
  std::uint64_t cpu = 0;
  if (!read_thread_cpu_ns(tid, cpu)) return -ESRCH;
  if (const int err = start_ticker(); err != 0) return err;
  slot.armed_cpu_ns.store(cpu, std::memory_order_relaxed);
  slot.armed_wall_ns.store(monotonic_ns(), std::memory_order_relaxed);
  slot.arm_seq.fetch_add(1, std::memory_order_release);
  slot.ticker_period.store(period_ns, std::memory_order_seq_cst);
  wake_ticker();
  return 0;
}

void ticker_disarm(int index) {
  if (g_clock_slots[index].ticker_period.exchange(0, std::memory_order_seq_cst) != 0) {
    wait_for_pass();
  }
}

void ticker_release(int index) {
  ticker_disarm(index);
  close_task_file(g_clock_slots[index].syscall_fd);
  close_task_file(g_clock_slots[index].schedstat_fd);
}

void ticker_signals_discarded() {
  // Without a wakeup: a slot that waits for a signal is polled again within its period.
  g_discard_seq.fetch_add(1, std::memory_order_release);
}

void ticker_after_fork_child() {
  // Slots past the highest ever claimed were never touched: writing them would copy their pages
  // into every fork child.
  const int end = g_clock_slot_end.load(std::memory_order_relaxed);
  for (int i = 0; i < end; ++i) {
    ClockSlot& slot = g_clock_slots[i];
    slot.ticker_period.store(0, std::memory_order_relaxed);
    slot.arm_seq.store(0, std::memory_order_relaxed);
    close_task_file(slot.syscall_fd);
    close_task_file(slot.schedstat_fd);
    g_state[i] = TickerSlotState{};
  }
  g_pass.store(0);
  g_seen_discard_seq = g_discard_seq.load(std::memory_order_relaxed);
  g_started.store(false);
}

}  // namespace userperf::pmu
