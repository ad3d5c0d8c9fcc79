// cpu-clock and task-clock on the calling thread: real timer signals, samples with the thread's
// registers and a frame-pointer callchain, closing while the timer fires, and samples of a thread
// whose RBP or SP points outside its stack.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "clock_test_support.hpp"
#include "pmu/clock/clock_slots.hpp"
#include "pmu/clock/clock_timer.hpp"
#include "support/monotonic_clock.hpp"

namespace userperf {
namespace {

using testing::burn_cpu_ns;
using testing::kMillisecond;
using testing::lost_samples;
using testing::thread_cpu_ns;

perf_event_attr clock_attr(std::uint64_t config) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = config;
  attr.sample_period = 1'000'000;  // 1 ms of CPU time
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
                     PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  attr.sample_regs_user =
      (1u << PERF_REG_X86_BP) | (1u << PERF_REG_X86_SP) | (1u << PERF_REG_X86_IP);
  attr.sample_stack_user = 64;
  attr.exclude_kernel = 1;
  return attr;
}

class ClockPmu : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(ClockPmu, SamplesTheCallingThread) {
  perf_event_attr attr = clock_attr(GetParam());
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    testing::MappedRing ring(fd, 16);
    const std::uint64_t cpu_start = thread_cpu_ns();
    burn_cpu_ns(80 * kMillisecond);
    ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
    const std::uint64_t cpu_used = thread_cpu_ns() - cpu_start;
    const auto records = ring.drain();
    // A 1 ms period goes through the ticker (clock_ticker_test.cpp has the rate checks): expect
    // PERIOD fields that add up to the CPU time used.
    ASSERT_GE(records.size(), 5u);
    std::uint64_t period_sum = 0;
    int in_burn = 0;
    for (const auto& r : records) {
      ASSERT_EQ(testing::record_type(r), PERF_RECORD_SAMPLE);
      EXPECT_EQ(testing::field_at<std::uint32_t>(r, 16), static_cast<std::uint32_t>(getpid()));
      EXPECT_EQ(testing::field_at<std::uint32_t>(r, 20),
                static_cast<std::uint32_t>(syscall(SYS_gettid)));
      const auto period = testing::field_at<std::uint64_t>(r, 24);
      EXPECT_EQ(period % 1'000'000u, 0u) << "whole periods";
      period_sum += period;
      const auto nr = testing::field_at<std::uint64_t>(r, 32);
      ASSERT_GE(nr, 2u);
      EXPECT_EQ(testing::field_at<std::uint64_t>(r, 40), PERF_CONTEXT_USER);
      EXPECT_EQ(testing::field_at<std::uint64_t>(r, 48), testing::field_at<std::uint64_t>(r, 8));
      const std::size_t regs = 40 + 8 * nr;
      EXPECT_EQ(testing::field_at<std::uint64_t>(r, regs), PERF_SAMPLE_REGS_ABI_64);
      EXPECT_EQ(testing::field_at<std::uint64_t>(r, regs + 24),
                testing::field_at<std::uint64_t>(r, 8))
          << "REGS_USER ip equals the sample ip";
      EXPECT_EQ(testing::field_at<std::uint64_t>(r, regs + 32), 64u);
      EXPECT_EQ(testing::field_at<std::uint64_t>(r, regs + 40 + 64), 64u) << "dyn_size";
      // The walk reaches this test function: some return address lies inside its body.
      for (std::uint64_t k = 2; k < nr; ++k) {
        const auto ret = testing::field_at<std::uint64_t>(r, 40 + 8 * k);
        if (ret != 0) ++in_burn;
      }
    }
    EXPECT_GT(in_burn, 0) << "the frame-pointer walk found no caller frames";
    EXPECT_GE(period_sum, cpu_used * 7 / 10);
    EXPECT_LE(period_sum, cpu_used + 4'000'000);
  }
  testing::event_close(fd);
}

INSTANTIATE_TEST_SUITE_P(Clocks, ClockPmu,
                         ::testing::Values(PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_TASK_CLOCK));

// From 10 ms up a period is a whole number of ticks: the thread's CPU-time POSIX timer delivers
// it (SI_TIMER), and the ticker's pokes carry it through the timer's stalls (the next test).
TEST(ClockPmu, LongPeriodSamplesAddUpToTheCpuTime) {
  perf_event_attr attr = testing::ticker_clock_attr(PERF_COUNT_SW_CPU_CLOCK, 10 * kMillisecond);
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    testing::MappedRing ring(fd, 16);
    const std::uint64_t cpu_start = thread_cpu_ns();
    burn_cpu_ns(150 * kMillisecond);
    ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
    const std::uint64_t cpu_used = thread_cpu_ns() - cpu_start;
    const auto samples = testing::clock_samples(ring.drain());
    EXPECT_GE(samples.size(), 3u);  // ~12 on an idle machine; fewer under load, PERIOD weighted
    std::uint64_t period_sum = 0;
    for (const auto& s : samples) {
      EXPECT_EQ(s.period % (10 * kMillisecond), 0u);
      period_sum += s.period;
    }
    EXPECT_GE(period_sum, cpu_used * 7 / 10);
    EXPECT_LE(period_sum, cpu_used + 10 * kMillisecond);
  }
  testing::event_close(fd);
}

// Every period is on the ticker too: under CPU contention a thread's CPU-time timer can go 40-100
// ms of the thread's CPU time past its expiry without firing (bench/cpu_timer_stall_probe.c: 79
// of 400 rounds of 150 ms at load 3 on 2 CPUs), which left the samples of a 10 ms clock 60% of
// the CPU time in a few runs of the test above in a hundred.
TEST(ClockPmu, LongPeriodIsPokedByTheTickerToo) {
  perf_event_attr attr = testing::ticker_clock_attr(PERF_COUNT_SW_CPU_CLOCK, 20 * kMillisecond);
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0) << strerror(errno);
  const auto* event = &*testing::engine().event(fd);
  std::uint64_t ticker_period = 0;
  for (const pmu::ClockSlot& slot : pmu::g_clock_slots) {
    if (slot.event.load() == event) ticker_period = slot.ticker_period.load();
  }
  EXPECT_EQ(ticker_period, 20 * kMillisecond);
  testing::event_close(fd);
}

TEST(ClockPmu, FrequencyBecomesAFixedPeriod) {
  perf_event_attr attr = clock_attr(PERF_COUNT_SW_CPU_CLOCK);
  attr.freq = 1;
  attr.sample_freq = 2000;
  const int fd = testing::event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(testing::engine().event(fd)->sample_period.load(), 500'000u);
  testing::event_close(fd);
}

TEST(ClockPmu, CpuWideClockIsRefused) {
  perf_event_attr attr = clock_attr(PERF_COUNT_SW_CPU_CLOCK);
  EXPECT_EQ(testing::event_open(&attr, -1, 0, -1, 0), -1);
  EXPECT_EQ(errno, EOPNOTSUPP);
}

TEST(ClockPmu, CloseWhileTheTimerFires) {
  for (int round = 0; round < 20; ++round) {
    perf_event_attr attr = clock_attr(PERF_COUNT_SW_TASK_CLOCK);
    attr.sample_period = 20'000;
    const int fd = testing::event_open(&attr, 0, -1, -1, 0);
    ASSERT_GE(fd, 0);
    testing::MappedRing* ring = new testing::MappedRing(fd, 2);
    burn_cpu_ns(3 * kMillisecond);
    if (round % 2 == 0) {
      delete ring;  // unmap first: the buffer goes while the event still fires
      burn_cpu_ns(1 * kMillisecond);
      ASSERT_EQ(testing::event_close(fd), 0);
    } else {
      ASSERT_EQ(testing::event_close(fd), 0);  // close first: the mapping outlives the event
      burn_cpu_ns(1 * kMillisecond);
      delete ring;
    }
  }
}

// What the in-process ticker's poke for fd's clock carries (SI_TIMER, timer id
// kOwnTickerTimerId): its slot and generation. kTick: what the clock's CPU-time timer sends when
// it fires from a scheduler tick (SI_TIMER, a real timer's id).
enum class Signal { kPoke, kTick };
siginfo_t clock_signal_info(int fd, Signal kind = Signal::kPoke) {
  siginfo_t info{};
  info.si_signo = pmu::clock_signal();
  info.si_code = SI_TIMER;
  info.si_timerid = kind == Signal::kPoke ? pmu::kOwnTickerTimerId : 0;
  const core::Event* event = testing::engine().event(fd);
  for (int i = 0; i < pmu::g_clock_slot_end.load(); ++i) {
    const pmu::ClockSlot& slot = pmu::g_clock_slots[static_cast<std::size_t>(i)];
    if (slot.event.load() != event) continue;
    const std::uint32_t generation = slot.generation.load() & pmu::kGenerationMask;
    info.si_value.sival_ptr = pmu::encode_clock_signal({i, generation});
  }
  return info;
}

// Makes the handler find one whole period pending on the calling thread at the next signal for
// `info`'s clock: the handler counts periods from the thread's CPU clock, and a quiet clock's
// period (below) is far longer than any test runs.
void owe_one_period(const siginfo_t& info) {
  pmu::ClockSlot& slot = pmu::g_clock_slots[static_cast<std::size_t>(
      pmu::decode_clock_signal(info.si_value.sival_ptr).slot)];
  const std::uint64_t period = slot.event.load()->sample_period.load();
  slot.accounted_cpu_ns.store(thread_cpu_ns() - period);
}

// Queues `info` to the calling thread with RBP set to `rbp` (a function that uses RBP as a scratch
// register), one period owed unless the caller set up what is owed: the handler runs as the system
// call returns, so it samples exactly that RBP.
void queue_with_rbp(const siginfo_t& info, std::uint64_t rbp, bool owe = true) {
  if (owe) owe_one_period(info);
  const long pid = getpid();
  const long tid = testing::own_tid();
  const long signo = info.si_signo;
  register const siginfo_t* info_arg asm("r10") = &info;
  long ret = SYS_rt_tgsigqueueinfo;
  asm volatile(
      "mov %%rbp, %%r12\n\t"
      "mov %[rbp], %%rbp\n\t"
      "syscall\n\t"
      "mov %%r12, %%rbp"
      : "+a"(ret)
      : "D"(pid), "S"(tid), "d"(signo), "r"(info_arg), [rbp] "r"(rbp)
      : "rcx", "r11", "r12", "memory");
  ASSERT_EQ(ret, 0);
}

// A sample of clock_attr's layout: its callchain, REGS_USER {BP, SP, IP} and STACK_USER sizes.
struct StackSample {
  std::uint64_t ip = 0;
  std::vector<std::uint64_t> callchain;
  std::uint64_t bp = 0, sp = 0;
  std::uint64_t stack_size = 0, dyn_size = 0;
};

std::vector<StackSample> stack_samples(const std::vector<std::vector<std::uint8_t>>& records) {
  std::vector<StackSample> out;
  for (const auto& r : records) {
    if (testing::record_type(r) != PERF_RECORD_SAMPLE) continue;
    StackSample s;
    s.ip = testing::field_at<std::uint64_t>(r, 8);
    const auto nr = testing::field_at<std::uint64_t>(r, 32);
    for (std::uint64_t k = 0; k < nr; ++k) {
      s.callchain.push_back(testing::field_at<std::uint64_t>(r, 40 + 8 * k));
    }
    const std::size_t regs = 40 + 8 * nr;
    s.bp = testing::field_at<std::uint64_t>(r, regs + 8);
    s.sp = testing::field_at<std::uint64_t>(r, regs + 16);
    s.stack_size = testing::field_at<std::uint64_t>(r, regs + 32);
    if (s.stack_size != 0)
      s.dyn_size = testing::field_at<std::uint64_t>(r, regs + 40 + s.stack_size);
    out.push_back(s);
  }
  return out;
}

// A clock that never fires by itself (a 1000 s period): only the signals a test queues, with a
// period owed (owe_one_period), sample. A
// signal a thread queues to itself arrives as its rt_tgsigqueueinfo returns, a kernel-mode
// moment: queued as the clock's timer (SI_TIMER), it is sampled there, at the user address the call
// returns to, only by a clock that includes the kernel (exclude_kernel 0, the default here).
int quiet_clock(std::uint64_t stack_bytes, bool exclude_kernel = false) {
  perf_event_attr attr = clock_attr(PERF_COUNT_SW_CPU_CLOCK);
  attr.sample_period = 1000'000'000'000;
  attr.sample_stack_user = static_cast<std::uint32_t>(stack_bytes);
  attr.exclude_kernel = exclude_kernel ? 1 : 0;
  return testing::event_open(&attr, 0, -1, -1, 0);
}

std::uint64_t read_count(int fd) {
  std::uint64_t count = 0;
  EXPECT_EQ(testing::event_read(fd, &count, sizeof count), static_cast<ssize_t>(sizeof count));
  return count;
}

std::size_t count_samples(const std::vector<std::vector<std::uint8_t>>& records) {
  return static_cast<std::size_t>(std::count_if(records.begin(), records.end(), [](const auto& r) {
    return testing::record_type(r) == PERF_RECORD_SAMPLE;
  }));
}

// Spins in user code, no system call, until the thread has used `ns` more CPU time (the clock is
// read once per million iterations).
// Spins in user code, with no system call (the thread's CPU clock is one; the monotonic clock is
// read in the vDSO), until the ring's head moves or `wall_ns` pass: a tick can only find it there.
__attribute__((noinline)) void spin_in_user_code_until_head_moves(const testing::MappedRing& ring,
                                                                  std::uint64_t wall_ns) {
  volatile std::uint64_t sink = 0;
  const auto* control = ring.control();
  const std::uint64_t head = __atomic_load_n(&control->data_head, __ATOMIC_ACQUIRE);
  const std::uint64_t end = support::monotonic_ns() + wall_ns;
  while (__atomic_load_n(&control->data_head, __ATOMIC_ACQUIRE) == head &&
         support::monotonic_ns() < end) {
    for (int i = 0; i < 100'000; ++i) sink = sink * 3 + static_cast<unsigned>(i);
  }
}

TEST(ClockPmu, ExcludeKernelTakesNoSampleWhereTheTickFoundTheKernel) {
  // The timer's signal arriving at a system call's exit: the tick found the thread in the kernel,
  // where exclude_kernel takes no sample (perf_exclude_event). The period still counts.
  const int fd = quiet_clock(0, true);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    testing::MappedRing ring(fd, 16);
    const std::uint64_t before = read_count(fd);
    queue_with_rbp(clock_signal_info(fd, Signal::kTick), 0);
    EXPECT_EQ(count_samples(ring.drain()), 0u) << "a sample at the system call's return address";
    EXPECT_EQ(read_count(fd) - before, 1000'000'000'000u);
  }
  testing::event_close(fd);
}

TEST(ClockPmu, PokeAtASystemCallExitIsTakenAtTheNextTick) {
  // A poke arriving at a system call's exit is re-aimed at the thread's next tick, which finds it
  // in its user-code loop: one sample there, its period counted once.
  const int fd = quiet_clock(0, true);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    testing::MappedRing ring(fd, 16);
    const std::uint64_t before = read_count(fd);
    queue_with_rbp(clock_signal_info(fd, Signal::kPoke), 0);
    EXPECT_EQ(count_samples(ring.drain()), 0u) << "taken at the system call's exit";
    spin_in_user_code_until_head_moves(ring, 5000 * kMillisecond);  // its next tick
    const auto records = ring.drain();
    ASSERT_EQ(count_samples(records), 1u);
    const auto& r = records[0];
    EXPECT_EQ(testing::field_at<std::uint64_t>(r, 24), 1000'000'000'000u) << "PERIOD";
    EXPECT_EQ(read_count(fd) - before, 1000'000'000'000u) << "counted once";
  }
  testing::event_close(fd);
}

// Much CPU time its samples do not stand for yet is not enough to count periods lost: a thread
// that seldom runs at a tick (a shell between its forks) has that too, and so has one whose pokes
// waited for it to get a CPU. Lost takes a poke behind which the thread ran on, or a clock stopped
// while the thread blocks the signal.
TEST(ClockPmu, PendingTimeIsLostOnlyWhereTheSignalWasBlocked) {
  const int fd = quiet_clock(0);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    testing::MappedRing ring(fd, 16);
    const siginfo_t tick = clock_signal_info(fd, Signal::kTick);
    pmu::ClockSlot& slot = pmu::g_clock_slots[static_cast<std::size_t>(
        pmu::decode_clock_signal(tick.si_value.sival_ptr).slot)];
    const std::uint64_t period = 1000'000'000'000;
    // Fifty periods pending, delivered by a tick: one sample of all fifty, nothing lost.
    slot.accounted_cpu_ns.store(thread_cpu_ns() - 50 * period);
    queue_with_rbp(tick, 0, false);
    auto records = ring.drain();
    ASSERT_EQ(count_samples(records), 1u);
    EXPECT_EQ(testing::field_at<std::uint64_t>(records[0], 24), 50 * period);
    EXPECT_EQ(lost_samples(records), 0u);
    // A poke behind which the thread ran all fifty periods on: those it could not take are lost.
    const siginfo_t poke = clock_signal_info(fd, Signal::kPoke);
    const auto value = pmu::decode_clock_signal(poke.si_value.sival_ptr);
    const auto stamped = [&](std::uint64_t cpu_ns) {
      siginfo_t info = poke;
      info.si_value.sival_ptr =
          pmu::encode_clock_signal({value.slot, value.generation, pmu::clock_signal_stamp(cpu_ns)});
      return info;
    };
    slot.accounted_cpu_ns.store(thread_cpu_ns() - 50 * period);
    queue_with_rbp(stamped(thread_cpu_ns() - 50 * period), 0, false);
    records = ring.drain();
    EXPECT_EQ(lost_samples(records), 49u);
    EXPECT_EQ(count_samples(records), 1u) << "the last period, where the poke landed";
    // A poke sent when the thread had used what it has now (it waited for a CPU, however long
    // in wall time): nothing lost; at the system call's exit, its periods wait for a tick.
    slot.accounted_cpu_ns.store(thread_cpu_ns() - 50 * period);
    queue_with_rbp(stamped(thread_cpu_ns()), 0, false);
    records = ring.drain();
    EXPECT_EQ(lost_samples(records), 0u) << "a poke that waited for a CPU";
    EXPECT_EQ(count_samples(records), 0u) << "re-aimed at the next tick";
  }
  testing::event_close(fd);
}

// A clock stopped while its thread blocks the signal counts what the thread used since its last
// sample as lost; stopped while the signal is deliverable, it counts nothing lost.
TEST(ClockPmu, StoppingWhileBlockedCountsTheUnsampledPeriods) {
  for (const bool blocked : {false, true}) {
    perf_event_attr attr = clock_attr(PERF_COUNT_SW_CPU_CLOCK);
    attr.sample_period = 1000'000'000'000;
    const int fd = testing::event_open(&attr, 0, -1, -1, 0);
    ASSERT_GE(fd, 0) << strerror(errno);
    {
      testing::MappedRing ring(fd, 16);
      const siginfo_t tick = clock_signal_info(fd, Signal::kTick);
      pmu::ClockSlot& slot = pmu::g_clock_slots[static_cast<std::size_t>(
          pmu::decode_clock_signal(tick.si_value.sival_ptr).slot)];
      std::uint64_t mask = blocked ? std::uint64_t{1} << (pmu::clock_signal() - 1) : 0;
      syscall(SYS_rt_sigprocmask, SIG_BLOCK, &mask, nullptr, sizeof mask);
      slot.accounted_cpu_ns.store(thread_cpu_ns() - 30 * attr.sample_period);
      ASSERT_EQ(testing::event_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
      syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &mask, nullptr, sizeof mask);
      const auto records = ring.drain();
      EXPECT_EQ(lost_samples(records), blocked ? 30u : 0u) << (blocked ? "blocked" : "deliverable");
      EXPECT_EQ(count_samples(records), 0u);
    }
    testing::event_close(fd);
  }
}

TEST(ClockPmu, RbpNearTheTopOfTheAddressSpaceEndsTheWalk) {
  // fp + 16 wraps to 0 for these: a bound written that way let the walk read 0xfff...f0.
  const int fd = quiet_clock(64);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    testing::MappedRing ring(fd, 16);
    const siginfo_t info = clock_signal_info(fd, Signal::kTick);
    for (const std::uint64_t rbp : {~std::uint64_t{15}, ~std::uint64_t{7}}) {
      queue_with_rbp(info, rbp);
    }
    const auto samples = stack_samples(ring.drain());
    ASSERT_EQ(samples.size(), 2u);
    for (const auto& s : samples) {
      EXPECT_GE(s.bp, ~std::uint64_t{15});
      ASSERT_EQ(s.callchain.size(), 2u) << "no frames beyond ip";
      EXPECT_EQ(s.callchain[0], PERF_CONTEXT_USER);
      EXPECT_EQ(s.callchain[1], s.ip);
      EXPECT_EQ(s.dyn_size, 64u) << "the stack itself is still the thread's";
    }
  }
  testing::event_close(fd);
}

TEST(ClockPmu, AReturnAddressOutsideUserSpaceEndsTheWalk) {
  // RBP at a "frame" on this thread's stack whose return address is -1 (what a function built
  // without frame pointers may leave there): stored, it would read as a context marker.
  const int fd = quiet_clock(64);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    testing::MappedRing ring(fd, 16);
    const siginfo_t info = clock_signal_info(fd, Signal::kTick);
    for (const std::uint64_t bad_return : {~std::uint64_t{0}, std::uint64_t{1} << 63}) {
      volatile std::uint64_t frame[2] = {0, bad_return};
      queue_with_rbp(info, reinterpret_cast<std::uint64_t>(&frame[0]));
    }
    const auto samples = stack_samples(ring.drain());
    ASSERT_EQ(samples.size(), 2u);
    for (const auto& s : samples) {
      ASSERT_EQ(s.callchain.size(), 2u) << "the bad return address was stored";
      EXPECT_EQ(s.callchain[0], PERF_CONTEXT_USER);
      EXPECT_EQ(s.callchain[1], s.ip);
    }
  }
  testing::event_close(fd);
}

// A coroutine (makecontext) on a stack of its own, mapped with a PROT_NONE page above its top.
struct Coroutine {
  static constexpr std::size_t kStackBytes = 64 * 1024;
  static constexpr std::size_t kGuardBytes = 4096;
  char* mapping =
      static_cast<char*>(mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ucontext_t caller{};
  ucontext_t context{};

  Coroutine() { mprotect(mapping + kStackBytes, kGuardBytes, PROT_NONE); }
  ~Coroutine() { munmap(mapping, kStackBytes + kGuardBytes); }
  std::uint64_t low() const { return reinterpret_cast<std::uint64_t>(mapping); }
  std::uint64_t high() const { return low() + kStackBytes; }

  // Runs body() on the coroutine's stack until it returns.
  void run(void (*body)()) {
    getcontext(&context);
    context.uc_stack.ss_sp = mapping;
    context.uc_stack.ss_size = kStackBytes;
    context.uc_link = &caller;
    makecontext(&context, body, 0);
    swapcontext(&caller, &context);
  }
};

siginfo_t g_coroutine_signal{};

void queue_from_the_coroutine() {
  owe_one_period(g_coroutine_signal);
  syscall(SYS_rt_tgsigqueueinfo, getpid(), testing::own_tid(), g_coroutine_signal.si_signo,
          &g_coroutine_signal);
}

TEST(ClockPmu, SampleOnAnotherStackCarriesNoStack) {
  // More than lies between the coroutine's SP and its top: a copy bounded by the thread's stack
  // top instead would run into the guard page.
  constexpr std::uint64_t kStackBytes = 16 * 1024;
  const int fd = quiet_clock(kStackBytes);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    testing::MappedRing ring(fd, 16);
    Coroutine coroutine;
    ASSERT_NE(coroutine.mapping, MAP_FAILED);
    g_coroutine_signal = clock_signal_info(fd, Signal::kTick);
    coroutine.run(queue_from_the_coroutine);
    const auto samples = stack_samples(ring.drain());
    ASSERT_EQ(samples.size(), 1u);
    const StackSample& s = samples[0];
    EXPECT_GE(s.sp, coroutine.low());
    EXPECT_LT(s.sp, coroutine.high());
    ASSERT_EQ(s.callchain.size(), 2u) << "no frames beyond ip";
    EXPECT_EQ(s.callchain[1], s.ip);
    EXPECT_EQ(s.stack_size, kStackBytes);
    EXPECT_EQ(s.dyn_size, 0u);

    // Back on the thread's own stack, samples carry it again.
    queue_with_rbp(clock_signal_info(fd, Signal::kTick), 0);
    const auto after = stack_samples(ring.drain());
    ASSERT_EQ(after.size(), 1u);
    const testing::StackRange own = testing::own_stack();
    ASSERT_TRUE(own.contains(after[0].sp));
    EXPECT_EQ(after[0].dyn_size, std::min(kStackBytes, own.high - after[0].sp));
  }
  testing::event_close(fd);
}

}  // namespace
}  // namespace userperf
