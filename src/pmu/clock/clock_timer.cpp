// The clock signal handler is the write path: SIGNAL-SAFE from clock_signal_handler down.
#include "pmu/clock/clock_timer.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/sample_data.hpp"
#include "core/sample_output.hpp"
#include "pmu/clock/clock_slots.hpp"
#include "pmu/clock/clock_ticker.hpp"
#include "pmu/clock/user_context.hpp"
#include "support/monotonic_clock.hpp"
#include "support/task_ids.hpp"

namespace userperf::pmu {

std::array<ClockSlot, kClockSlots> g_clock_slots;
std::atomic<int> g_clock_slot_end{0};
std::atomic<std::uint64_t> g_clock_fork_epoch{0};

namespace {

constexpr std::uint64_t kMinPeriodNs = 10'000;  // the kernel clamps hrtimer periods to 10 us
constexpr int kMaxCallchain = 128;

// The slot's event when the slot still holds the generation the signal was sent for, in
// `engine`; nullptr for a signal that outlived its event. Generation, event, engine and the stack
// bounds are read between two reads of the generation, which a slot changes before it is emptied
// or reused: the bounds are the event's thread's, never half another's.
core::Event* live_event(ClockSlot& slot, const core::Engine& engine, std::uint32_t generation,
                        StackBounds& stack) {
  const std::uint32_t before = slot.generation.load(std::memory_order_seq_cst);
  if ((before & 1) == 0 || (before & kGenerationMask) != generation) return nullptr;
  core::Event* event = slot.event.load(std::memory_order_seq_cst);
  const bool same_engine = slot.engine.load(std::memory_order_seq_cst) == &engine;
  stack.low = slot.stack_low.load(std::memory_order_seq_cst);
  stack.high = slot.stack_high.load(std::memory_order_seq_cst);
  if (!same_engine || slot.generation.load(std::memory_order_seq_cst) != before) return nullptr;
  return event;
}

// One sample of `periods` periods, where the signal interrupted the thread.
void sample(core::Engine& engine, core::Event& event, const StackBounds& stack,
            std::uint64_t periods, const ucontext_t& uc) {
  const std::uint64_t elapsed = event.sample_period.load(std::memory_order_relaxed) * periods;
  core::SampleRegs regs;
  sample_regs_of(uc.uc_mcontext, regs);
  std::uint64_t chain[kMaxCallchain];
  core::SampleExtras extras;
  core::SampleData data;
  data.extras = &extras;
  data.ip = regs.values[PERF_REG_X86_IP];
  data.period = elapsed;
  data.cpu = static_cast<std::uint32_t>(sched_getcpu());
  data.cpumode = PERF_RECORD_MISC_USER;
  extras.regs_user = &regs;
  extras.regs_intr = &regs;
  const std::uint64_t sp = regs.values[PERF_REG_X86_SP];
  // Only an SP on the thread's own stack has mapped memory up to stack_high. One on a coroutine
  // stack (makecontext), a fiber or an alternate signal stack has not: such a sample keeps its ip
  // and registers, and carries neither frames beyond ip nor stack bytes.
  const bool on_own_stack = sp >= stack.low && sp < stack.high;
  // No walk when the user part is excluded (dwarf mode unwinds REGS_USER + STACK_USER later).
  if ((event.attr.sample_type & PERF_SAMPLE_CALLCHAIN) && !event.attr.exclude_callchain_user) {
    extras.callchain = chain;
    extras.callchain_nr = walk_user_frames(data.ip, regs.values[PERF_REG_X86_BP], sp,
                                           on_own_stack ? stack.high : 0, chain, kMaxCallchain);
  }
  if (on_own_stack) {
    extras.stack_user.sp = reinterpret_cast<const void*>(sp);
    extras.stack_user.available = stack.high - sp;
  }
  // The hrtimer path (perf_swevent_hrtimer): __perf_event_overflow(event, 1, ...).
  engine.overflow(event, data, true);
}

// A signal's source: the thread's own CPU-time timer, fired from a scheduler tick on the thread's
// CPU, or a ticker's poke, sent from another CPU.
enum class ClockSource { kTick, kPoke };

// The CPU time the calling thread (in the handler: the sampled one) has used.
std::uint64_t own_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// Pending CPU time from which periods are counted lost rather than sampled, when a poke says the
// thread ran this long while the poke waited queued. While the thread takes the signal its own
// timer fires on ticks it runs through, and pokes come every period, so pending time stays within
// a period or a few ticks (4 ms each at HZ 250, 10 ms at HZ 100) unless it seldom runs at a tick
// (a shell between its forks). A thread that ran on this long behind a poke blocked the signal (a
// raw rt_sigprocmask, which the recorder's agent cannot see) or ran a long signal handler of its
// own that masks it. A poke's wait alone says nothing: under CPU contention pokes wait for the
// thread to get a CPU (10-15 ms beside four busy loops), and the wall-clock stamp pokes carried
// before 2026-11-29 made such a thread "blocked the sampling signal" in userperf record's summary.
std::uint64_t unsampled_gap_ns(std::uint64_t period) {
  constexpr std::uint64_t kMinGapNs = 25'000'000;
  return std::max(kMinGapNs, 3 * period);
}

// Whether another clock signal is queued for the calling thread (in the handler the signal is
// blocked, so one queued behind the one being handled shows as pending).
bool clock_signal_queued() {
  sigset_t pending;
  return sigpending(&pending) == 0 && sigismember(&pending, clock_signal()) == 1;
}

// The CPU time the thread used while a poke stamped `sent_cpu` (0: not stamped) waited queued.
// The external ticker stamps schedstat's run time, which lags by up to a tick: this may be that
// much more than the thread ran, never less.
std::uint64_t ran_behind_poke_ns(std::uint32_t sent_cpu, std::uint64_t cpu) {
  if (sent_cpu == 0) return 0;
  const std::uint32_t now = clock_signal_stamp(cpu);
  return static_cast<std::uint64_t>(static_cast<std::uint32_t>(now - sent_cpu)) << kSentShift;
}

// A thread its own timer finds busy asks the external ticker for pokes once it has run this long
// without one (a ticker that pokes it does so every period), and not again for as long.
std::uint64_t unpoked_before_busy_ns(std::uint64_t period) {
  constexpr std::uint64_t kMinUnpokedNs = 2'000'000;
  return std::max(kMinUnpokedNs, 3 * period);
}

std::atomic<pid_t> g_external_pid{0};
std::atomic<bool (*)()> g_sample_gate{nullptr};

bool sample_gate_open() {
  bool (*gate)() = g_sample_gate.load(std::memory_order_relaxed);
  return gate == nullptr || gate();
}
std::atomic<void (*)(pid_t)> g_external_busy{nullptr};

void say_busy(ClockSlot& slot, const core::Event& event, std::uint64_t cpu, std::uint64_t period) {
  void (*busy)(pid_t) = g_external_busy.load(std::memory_order_relaxed);
  if (busy == nullptr) return;
  const std::uint64_t quiet = unpoked_before_busy_ns(period);
  if (cpu - slot.poked_cpu_ns.load(std::memory_order_relaxed) < quiet ||
      cpu - slot.busy_said_cpu_ns.load(std::memory_order_relaxed) < quiet) {
    return;
  }
  slot.busy_said_cpu_ns.store(cpu, std::memory_order_relaxed);
  busy(event.pid);
}

// Sets `periods` aside for the thread's next scheduler tick: its CPU-time timer, made to expire at
// once (a timer expires on the tick after its time), then periodic again from there.
void reaim_at_next_tick(ClockSlot& slot, const core::Event& event, std::uint64_t periods) {
  slot.reaimed_periods.fetch_add(periods, std::memory_order_relaxed);
  const std::uint64_t period =
      std::max(event.sample_period.load(std::memory_order_relaxed), kMinPeriodNs);
  itimerspec spec{};
  spec.it_interval.tv_sec = static_cast<time_t>(period / 1'000'000'000u);
  spec.it_interval.tv_nsec = static_cast<long>(period % 1'000'000'000u);
  spec.it_value.tv_nsec = 1;
  timer_settime(slot.timer.load(std::memory_order_relaxed), 0, &spec, nullptr);
}

// Counts the periods the thread used since its last sample, from its own CPU clock, and samples
// them where the signal interrupted it.
//
// A poke that arrives at a system-call exit is re-aimed at the thread's next scheduler tick: a
// poke crosses CPUs and takes microseconds to arrive (tens in a VM), and a thread that makes a
// system call every few microseconds has entered one by then, so the signal is delivered on its
// way out: taken there, half the samples of a pread-dense program landed in __libc_pread. Its
// periods are set aside for the thread's next tick, whose timer signal finds the thread exactly
// where it is, as the kernel's hrtimer would (a CPU-time timer never fires while the thread
// sleeps, so it cannot cut a blocking call short); later pokes take the periods after them. A
// tick that finds the thread in the kernel takes no sample under exclude_kernel, as the kernel's
// perf_exclude_event does; the periods still count.
void account(core::Engine& engine, core::Event& event, ClockSlot& slot,
             const ClockSignalValue& value, const StackBounds& stack, ClockSource source,
             const ucontext_t& uc) {
  const std::uint64_t period = event.sample_period.load(std::memory_order_relaxed);
  if (period == 0) return;
  const std::uint64_t cpu = own_cpu_ns();
  const bool at_syscall_exit = delivered_at_syscall_exit(uc.uc_mcontext);
  std::uint64_t periods = 0;
  if (source == ClockSource::kPoke) slot.poked_cpu_ns.store(cpu, std::memory_order_relaxed);
  if (source == ClockSource::kTick) {
    say_busy(slot, event, cpu, period);
    periods = slot.reaimed_periods.exchange(0, std::memory_order_relaxed);
    if (periods != 0 && !sample_gate_open()) {
      slot.reaimed_periods.fetch_add(periods, std::memory_order_relaxed);
      return;
    }
  }
  if (periods == 0) {
    const auto pending =
        static_cast<std::int64_t>(cpu - slot.accounted_cpu_ns.load(std::memory_order_relaxed));
    const auto signed_period = static_cast<std::int64_t>(period);
    // Rounded to whole periods: a sample half a period early stands for one period, and the
    // difference carries over to the next.
    if (pending * 2 < signed_period) return;
    // A tick that finds much pending while a poke is queued behind it (the signal was blocked,
    // and queued signals arrive in the order they were sent): the poke, which knows it waited,
    // takes the periods.
    if (source == ClockSource::kTick &&
        static_cast<std::uint64_t>(pending) >= unsampled_gap_ns(period) && clock_signal_queued()) {
      return;
    }
    if (!sample_gate_open()) return;  // the periods stay pending
    periods = static_cast<std::uint64_t>((pending + signed_period / 2) / signed_period);
    slot.accounted_cpu_ns.fetch_add(periods * period, std::memory_order_relaxed);
    // A poke behind which the thread ran on: the time it could not be taken (wherever the signal
    // now arrives, often at the system call that unblocked it) is counted lost, in a
    // LOST_SAMPLES record, instead of landing all at once in one sample.
    if (source == ClockSource::kPoke &&
        ran_behind_poke_ns(value.sent_cpu, cpu) >= unsampled_gap_ns(period) &&
        static_cast<std::uint64_t>(pending) >= unsampled_gap_ns(period) && periods > 1) {
      clock_slot_count_lost(value.slot, value.generation, periods - 1);
      periods = 1;
    } else if (source == ClockSource::kPoke && at_syscall_exit) {
      reaim_at_next_tick(slot, event, periods);
      return;
    }
  }
  event.count.fetch_add(periods * period, std::memory_order_relaxed);
  if (at_syscall_exit && event.attr.exclude_kernel) return;
  sample(engine, event, stack, periods, uc);
}

// SI_TIMER: the thread's own CPU-time timer, or (timer id kOwnTickerTimerId) a poke of this
// process's ticker thread; SI_QUEUE from the external ticker: a poke. Either way the handler
// counts what the thread used since its last sample.
void clock_signal_handler(int, siginfo_t* info, void* context) {
  follow_forked_clocks();  // nothing unless this is a fork child's thread, at its first signal
  const ClockSignalValue value = decode_clock_signal(info->si_value.sival_ptr);
  const bool from_own_ticker = info->si_code == SI_TIMER && info->si_timerid == kOwnTickerTimerId;
  const pid_t external = g_external_pid.load(std::memory_order_relaxed);
  const bool from_external = info->si_code == SI_QUEUE && external != 0 && info->si_pid == external;
  if (info->si_code != SI_TIMER && !from_own_ticker && !from_external) return;
  ClockSlot& slot = g_clock_slots[static_cast<std::size_t>(value.slot)];
  if (from_own_ticker) slot.ticker_delivered.fetch_add(1, std::memory_order_release);
  core::Engine* engine = slot.engine.load(std::memory_order_acquire);
  if (engine == nullptr) return;
  const int saved_errno = errno;
  {
    core::OutputGuard guard(engine->grace_period());
    // Only on the thread the event samples: a thread that exited without closing its clock can
    // have its tid reused, and the frame walk's bounds are the old thread's stack.
    StackBounds stack;
    core::Event* event = live_event(slot, *engine, value.generation, stack);
    if (event != nullptr && event->pid == support::current_tid()) {
      account(
          *engine, *event, slot, value, stack,
          info->si_code == SI_TIMER && !from_own_ticker ? ClockSource::kTick : ClockSource::kPoke,
          *static_cast<const ucontext_t*>(context));
    }
  }
  errno = saved_errno;
}

std::once_flag g_install_once;
int g_install_error = 0;

void install_handler() {
  struct sigaction sa {};
  sa.sa_sigaction = clock_signal_handler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  if (sigaction(clock_signal(), &sa, nullptr) != 0) g_install_error = errno;
}

int claim_slot(core::Event& event) {
  for (int i = 0; i < kClockSlots; ++i) {
    core::Event* expected = nullptr;
    if (g_clock_slots[i].event.compare_exchange_strong(expected, &event)) {
      int end = g_clock_slot_end.load();
      while (end <= i && !g_clock_slot_end.compare_exchange_weak(end, i + 1)) {
      }
      return i;
    }
  }
  return -1;
}

// Makes the slot's generation even (signals in flight stop matching), then empties it.
void release_slot(ClockSlot& slot) {
  slot.generation.fetch_add(1, std::memory_order_seq_cst);
  slot.owner.store(nullptr, std::memory_order_relaxed);
  slot.engine.store(nullptr, std::memory_order_seq_cst);
  slot.event.store(nullptr, std::memory_order_seq_cst);
}

bool current_image(const ClockTimer& timer) {
  return timer.slot >= 0 && timer.fork_epoch == g_clock_fork_epoch.load(std::memory_order_relaxed);
}

void stop_posix_timer(ClockTimer& timer) {
  const itimerspec stop{};
  timer_settime(timer.timer, 0, &stop, nullptr);
}

// Whether thread `tid` of this process blocks the clock signal now: the calling thread's own mask
// from the system call (the agent's wrappers show the program another), another's from its
// SigBlk line in /proc/self/task/TID/status.
bool blocks_clock_signal(pid_t tid) {
  const int signo = clock_signal();
  std::uint64_t mask = 0;
  if (tid == support::current_tid()) {
    if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, nullptr, &mask, sizeof mask) != 0) return false;
  } else {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/task/%d/status", static_cast<int>(tid));
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[4096];
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = '\0';
    const char* line = std::strstr(buf, "\nSigBlk:");
    if (line == nullptr) return false;
    mask = std::strtoull(line + 9, nullptr, 16);
  }
  return signo >= 1 && signo <= 64 && (mask >> (signo - 1) & 1) != 0;
}

// When the clock stops while its thread blocks the clock signal (a raw rt_sigprocmask the agent
// cannot see): the periods it used since its last sample are counted lost, as the handler would
// have counted them had a poke reached it. A thread that blocks the signal until it ends gets here
// with every period it used.
void count_unsampled(const ClockTimer& timer) {
  ClockSlot& slot = g_clock_slots[static_cast<std::size_t>(timer.slot)];
  const core::Event* event = slot.event.load(std::memory_order_acquire);
  timespec now{};
  if (event == nullptr ||
      clock_gettime(thread_cpu_clock(slot.tid.load(std::memory_order_relaxed)), &now) != 0) {
    return;
  }
  const std::uint64_t period = event->sample_period.load(std::memory_order_relaxed);
  const std::uint64_t cpu = static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u +
                            static_cast<std::uint64_t>(now.tv_nsec);
  const auto pending =
      static_cast<std::int64_t>(cpu - slot.accounted_cpu_ns.load(std::memory_order_relaxed));
  if (period == 0 || pending < 0 ||
      static_cast<std::uint64_t>(pending) < unsampled_gap_ns(period) ||
      !blocks_clock_signal(slot.tid.load(std::memory_order_relaxed)) || !sample_gate_open()) {
    return;
  }
  const std::uint64_t lost = static_cast<std::uint64_t>(pending) / period;
  slot.accounted_cpu_ns.fetch_add(lost * period, std::memory_order_relaxed);
  clock_slot_count_lost(timer.slot, slot.generation.load(std::memory_order_relaxed), lost);
}

}  // namespace

int clock_signal() {
  static const int signo = [] {
    if (const char* env = std::getenv("USERPERF_SIGNAL")) return std::atoi(env);
    return SIGRTMIN + 4;
  }();
  return signo;
}

void set_clock_sample_gate(bool (*gate)()) {
  g_sample_gate.store(gate, std::memory_order_release);
}

void use_external_ticker(const ExternalTicker& ticker) {
  g_external_busy.store(ticker.busy, std::memory_order_relaxed);
  g_external_pid.store(ticker.pid, std::memory_order_seq_cst);
}

std::uint32_t clock_poke_value(const core::Event& event) {
  const int end = g_clock_slot_end.load(std::memory_order_acquire);
  for (int i = 0; i < end; ++i) {
    const ClockSlot& slot = g_clock_slots[static_cast<std::size_t>(i)];
    const std::uint32_t generation = slot.generation.load(std::memory_order_acquire);
    if ((generation & 1) != 0 && slot.event.load(std::memory_order_acquire) == &event) {
      return static_cast<std::uint32_t>(
          reinterpret_cast<std::uint64_t>(encode_clock_signal({i, generation})));
    }
  }
  return 0;
}

bool clock_slot_count_lost(int index, std::uint32_t generation, std::uint64_t lost) {
  ClockSlot& slot = g_clock_slots[static_cast<std::size_t>(index)];
  core::Engine* engine = slot.engine.load(std::memory_order_acquire);
  if (engine == nullptr) return false;
  core::OutputGuard guard(engine->grace_period());
  StackBounds stack;
  core::Event* event = live_event(slot, *engine, generation, stack);
  if (event == nullptr) return false;
  const core::SampleId id{static_cast<std::uint32_t>(support::current_pid()),
                          static_cast<std::uint32_t>(event->pid), event->clock_now(),
                          static_cast<std::uint32_t>(sched_getcpu())};
  // The periods still count, as they do in the kernel when a sample cannot be taken.
  event->count.fetch_add(lost * event->sample_period.load(std::memory_order_relaxed),
                         std::memory_order_relaxed);
  return core::output_sideband(*event, PERF_RECORD_LOST_SAMPLES, 0, &lost, sizeof lost, id) == 0;
}

int clock_timer_create(core::Engine& engine, core::Event& event, pid_t tid, ClockTimer& out) {
  std::call_once(g_install_once, install_handler);
  if (g_install_error != 0) return -g_install_error;
  const int index = claim_slot(event);
  if (index < 0) return -EMFILE;
  ClockSlot& slot = g_clock_slots[static_cast<std::size_t>(index)];
  // Known when the sampled thread is the caller or the main thread, or when someone told
  // (note_thread_stack); otherwise samples carry no stack.
  const StackBounds stack = tid == support::current_tid()   ? current_thread_stack()
                            : tid == support::current_pid() ? main_thread_stack()
                                                            : noted_thread_stack(tid);
  out.stack_low = stack.low;
  out.stack_high = stack.high;
  slot.engine.store(&engine, std::memory_order_seq_cst);
  slot.tid.store(tid, std::memory_order_relaxed);
  slot.stack_low.store(stack.low, std::memory_order_relaxed);
  slot.stack_high.store(stack.high, std::memory_order_relaxed);
  // Odd: live. The handler reads engine and event only after seeing this generation.
  const std::uint32_t generation = slot.generation.fetch_add(1, std::memory_order_seq_cst) + 1;
  sigevent sev{};
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = clock_signal();
  sev.sigev_value.sival_ptr = encode_clock_signal({index, generation});
  sev._sigev_un._tid = tid;
  if (timer_create(thread_cpu_clock(tid), &sev, &out.timer) != 0) {
    const int err = errno;
    release_slot(slot);
    return -err;
  }
  slot.timer.store(out.timer, std::memory_order_relaxed);
  slot.owner.store(&out, std::memory_order_relaxed);
  out.slot = index;
  out.fork_epoch = g_clock_fork_epoch.load(std::memory_order_relaxed);
  out.on_ticker = false;
  return 0;
}

int arm_periodic_cpu_timer(timer_t timer, std::uint64_t period_ns) {
  const std::uint64_t ns = std::max(period_ns, kMinPeriodNs);
  itimerspec spec{};
  spec.it_interval.tv_sec = static_cast<time_t>(ns / 1'000'000'000u);
  spec.it_interval.tv_nsec = static_cast<long>(ns % 1'000'000'000u);
  spec.it_value = spec.it_interval;
  return timer_settime(timer, 0, &spec, nullptr) == 0 ? 0 : -errno;
}

int clock_timer_arm(ClockTimer& timer, std::uint64_t period_ns) {
  if (!current_image(timer)) return -ESRCH;
  const std::uint64_t ns = std::max(period_ns, kMinPeriodNs);
  ClockSlot& slot = g_clock_slots[static_cast<std::size_t>(timer.slot)];
  timespec now{};
  if (clock_gettime(thread_cpu_clock(slot.tid.load(std::memory_order_relaxed)), &now) != 0) {
    return -ESRCH;
  }
  // Samples count from here: what the thread used before is nobody's.
  const std::uint64_t cpu = static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u +
                            static_cast<std::uint64_t>(now.tv_nsec);
  slot.accounted_cpu_ns.store(cpu, std::memory_order_relaxed);
  slot.reaimed_periods.store(0, std::memory_order_relaxed);
  slot.poked_cpu_ns.store(cpu, std::memory_order_relaxed);
  slot.busy_said_cpu_ns.store(cpu, std::memory_order_relaxed);
  // Poked by the in-process ticker, unless another process pokes (ExternalTicker): between the
  // ticks for short periods, through the timer's stalls for long ones. Without /proc (or a thread
  // for the ticker) the timer alone samples, at most HZ times a second.
  const bool poked_here = g_external_pid.load() == 0;
  if (timer.on_ticker && !poked_here) ticker_disarm(timer.slot);
  timer.on_ticker = poked_here && ticker_arm(timer.slot, ns) == 0;
  return arm_periodic_cpu_timer(timer.timer, ns);
}

void clock_timer_disarm(ClockTimer& timer) {
  if (!current_image(timer)) return;
  count_unsampled(timer);
  if (timer.on_ticker) ticker_disarm(timer.slot);
  timer.on_ticker = false;
  stop_posix_timer(timer);
}

void clock_timer_destroy(ClockTimer& timer) {
  if (current_image(timer)) {
    timer_delete(timer.timer);
    ticker_release(timer.slot);
    ClockSlot& slot = g_clock_slots[static_cast<std::size_t>(timer.slot)];
    core::Engine* engine = slot.engine.load(std::memory_order_relaxed);
    release_slot(slot);
    // A handler that loaded the event before the slot was emptied leaves before the event is
    // freed (the engine's own grace period ran before destroy, while the slot still held it).
    if (engine != nullptr) engine->grace_period().synchronize();
  }
  timer.slot = -1;
}

void count_ending_thread_periods(bool blocks_signal) {
  const pid_t self = support::current_tid();
  timespec now{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0) return;
  const std::uint64_t cpu = static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u +
                            static_cast<std::uint64_t>(now.tv_nsec);
  bool gate_asked = false;
  const int end = g_clock_slot_end.load(std::memory_order_acquire);
  for (int i = 0; i < end; ++i) {
    ClockSlot& slot = g_clock_slots[static_cast<std::size_t>(i)];
    if ((slot.generation.load(std::memory_order_acquire) & 1) == 0 ||
        slot.tid.load(std::memory_order_relaxed) != self) {
      continue;
    }
    core::Event* event = slot.event.load(std::memory_order_acquire);
    if (event == nullptr ||
        event->state.load(std::memory_order_relaxed) != core::EventState::kActive) {
      continue;
    }
    const std::uint64_t period = event->sample_period.load(std::memory_order_relaxed);
    const auto pending =
        static_cast<std::int64_t>(cpu - slot.accounted_cpu_ns.load(std::memory_order_relaxed));
    // Periods set aside for the next tick (reaim_at_next_tick, or a closed gate) are counted
    // already; the whole ones pending since are not.
    const std::uint64_t whole = period != 0 && pending >= static_cast<std::int64_t>(period)
                                    ? static_cast<std::uint64_t>(pending) / period
                                    : 0;
    if (whole == 0 && slot.reaimed_periods.load(std::memory_order_relaxed) == 0) continue;
    // A thread that blocks the signal has its periods counted when the clock stops
    // (count_unsampled: LOST_SAMPLES in its ring, and the recorder names it).
    if (blocks_signal) continue;
    if (!gate_asked && !sample_gate_open()) return;
    gate_asked = true;
    slot.accounted_cpu_ns.fetch_add(whole * period, std::memory_order_relaxed);
    event->count.fetch_add(whole * period, std::memory_order_relaxed);
    event->lost_samples.fetch_add(
        whole + slot.reaimed_periods.exchange(0, std::memory_order_relaxed),
        std::memory_order_relaxed);
  }
}

}  // namespace userperf::pmu
