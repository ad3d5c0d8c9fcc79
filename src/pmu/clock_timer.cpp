// The timer signal handler is the write path: SIGNAL-SAFE from clock_signal_handler down.
#include "pmu/clock_timer.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>

#include "core/sample_data.hpp"

namespace userperf::pmu {

namespace {

constexpr int kSlots = 4096;
constexpr std::uint64_t kMinPeriodNs = 10'000;  // the kernel clamps hrtimer periods to 10 us
constexpr int kMaxCallchain = 128;

struct Slot {
  std::atomic<core::Event*> event{nullptr};
  std::atomic<std::uint64_t> stack_high{0};
};

std::array<Slot, kSlots> g_slots;
std::atomic<core::Engine*> g_engine{nullptr};
pid_t g_pid = 0;

// glibc's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED): the CPU-time clock of one thread.
clockid_t thread_cpu_clock(pid_t tid) {
  return static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 4 | 2);
}

void fill_regs(const mcontext_t& mc, core::SampleRegs& regs) {
  const greg_t* g = mc.gregs;
  regs.abi = PERF_SAMPLE_REGS_ABI_64;
  auto set = [&regs](int perf_reg, greg_t value) {
    regs.values[perf_reg] = static_cast<std::uint64_t>(value);
  };
  set(PERF_REG_X86_AX, g[REG_RAX]);
  set(PERF_REG_X86_BX, g[REG_RBX]);
  set(PERF_REG_X86_CX, g[REG_RCX]);
  set(PERF_REG_X86_DX, g[REG_RDX]);
  set(PERF_REG_X86_SI, g[REG_RSI]);
  set(PERF_REG_X86_DI, g[REG_RDI]);
  set(PERF_REG_X86_BP, g[REG_RBP]);
  set(PERF_REG_X86_SP, g[REG_RSP]);
  set(PERF_REG_X86_IP, g[REG_RIP]);
  set(PERF_REG_X86_FLAGS, g[REG_EFL]);
  set(PERF_REG_X86_CS, g[REG_CSGSFS] & 0xffff);
  set(PERF_REG_X86_SS, 0x2b);  // the user data segment on x86-64 Linux
  set(PERF_REG_X86_R8, g[REG_R8]);
  set(PERF_REG_X86_R9, g[REG_R9]);
  set(PERF_REG_X86_R10, g[REG_R10]);
  set(PERF_REG_X86_R11, g[REG_R11]);
  set(PERF_REG_X86_R12, g[REG_R12]);
  set(PERF_REG_X86_R13, g[REG_R13]);
  set(PERF_REG_X86_R14, g[REG_R14]);
  set(PERF_REG_X86_R15, g[REG_R15]);
}

// Frame-pointer walk bounded to [sp, stack_high): it reads only the sampled thread's own stack,
// so it cannot fault. Frames outside the bounds or not moving upwards end the walk.
std::uint64_t walk_frames(std::uint64_t ip, std::uint64_t fp, std::uint64_t sp,
                          std::uint64_t stack_high, std::uint64_t* out, int max) {
  int n = 0;
  out[n++] = PERF_CONTEXT_USER;
  out[n++] = ip;
  while (n < max && stack_high != 0 && fp >= sp && fp + 16 <= stack_high && (fp & 7) == 0) {
    const auto* frame = reinterpret_cast<const std::uint64_t*>(fp);
    const std::uint64_t ret = frame[1];
    if (ret == 0) break;
    out[n++] = ret;
    if (frame[0] <= fp) break;
    fp = frame[0];
  }
  return static_cast<std::uint64_t>(n);
}

void clock_signal_handler(int, siginfo_t* info, void* context) {
  if (info->si_code != SI_TIMER) return;
  const int slot = info->si_value.sival_int;
  core::Engine* engine = g_engine.load(std::memory_order_acquire);
  if (slot < 0 || slot >= kSlots || engine == nullptr) return;
  const int saved_errno = errno;
  {
    core::OutputGuard guard(engine->grace_period());
    core::Event* event = g_slots[slot].event.load(std::memory_order_acquire);
    if (event != nullptr) {
      const auto* uc = static_cast<const ucontext_t*>(context);
      core::SampleRegs regs;
      fill_regs(uc->uc_mcontext, regs);
      // CPU-time timers expire on scheduler ticks: a period shorter than a tick arrives as one
      // signal with overruns, and the sample stands for every period that elapsed.
      const std::uint64_t period = event->sample_period.load(std::memory_order_relaxed);
      const auto overruns = static_cast<std::uint64_t>(info->si_overrun > 0 ? info->si_overrun : 0);
      const std::uint64_t elapsed = period * (1 + overruns);
      event->count.fetch_add(elapsed, std::memory_order_relaxed);
      std::uint64_t chain[kMaxCallchain];
      const std::uint64_t stack_high = g_slots[slot].stack_high.load(std::memory_order_relaxed);
      core::SampleData data;
      data.ip = regs.values[PERF_REG_X86_IP];
      data.period = elapsed;
      data.pid = static_cast<std::uint32_t>(g_pid);
      data.tid = static_cast<std::uint32_t>(event->pid);
      data.cpu = static_cast<std::uint32_t>(sched_getcpu());
      data.cpumode = PERF_RECORD_MISC_USER;
      data.regs_user = &regs;
      data.regs_intr = &regs;
      const std::uint64_t sp = regs.values[PERF_REG_X86_SP];
      if (event->attr.sample_type & PERF_SAMPLE_CALLCHAIN) {
        data.callchain = chain;
        data.callchain_nr = walk_frames(data.ip, regs.values[PERF_REG_X86_BP], sp, stack_high,
                                        chain, kMaxCallchain);
      }
      if (stack_high > sp) {
        data.stack_user.sp = reinterpret_cast<const void*>(sp);
        data.stack_user.available = stack_high - sp;
      }
      engine->overflow(*event, data);
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
  g_pid = getpid();
}

// The calling thread's stack top, when the sampled thread is the caller.
std::uint64_t own_stack_high() {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return 0;
  void* base = nullptr;
  std::size_t size = 0;
  const int rc = pthread_attr_getstack(&attr, &base, &size);
  pthread_attr_destroy(&attr);
  return rc == 0 ? reinterpret_cast<std::uint64_t>(base) + size : 0;
}

}  // namespace

int clock_signal() {
  static const int signo = [] {
    if (const char* env = std::getenv("USERPERF_SIGNAL")) return std::atoi(env);
    return SIGRTMIN + 4;
  }();
  return signo;
}

int clock_timer_create(core::Engine& engine, core::Event& event, pid_t tid, ClockTimer& out) {
  std::call_once(g_install_once, install_handler);
  if (g_install_error != 0) return -g_install_error;
  g_engine.store(&engine, std::memory_order_release);
  int slot = -1;
  for (int i = 0; i < kSlots && slot < 0; ++i) {
    core::Event* expected = nullptr;
    if (g_slots[i].event.compare_exchange_strong(expected, &event)) slot = i;
  }
  if (slot < 0) return -EMFILE;
  sigevent sev{};
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = clock_signal();
  sev.sigev_value.sival_int = slot;
  sev._sigev_un._tid = tid;
  if (timer_create(thread_cpu_clock(tid), &sev, &out.timer) != 0) {
    const int err = errno;
    g_slots[slot].event.store(nullptr);
    return -err;
  }
  out.slot = slot;
  out.stack_high = tid == static_cast<pid_t>(syscall(SYS_gettid)) ? own_stack_high() : 0;
  g_slots[slot].stack_high.store(out.stack_high);
  return 0;
}

int clock_timer_arm(ClockTimer& timer, std::uint64_t period_ns) {
  const std::uint64_t ns = period_ns < kMinPeriodNs ? kMinPeriodNs : period_ns;
  itimerspec spec{};
  spec.it_interval.tv_sec = static_cast<time_t>(ns / 1'000'000'000u);
  spec.it_interval.tv_nsec = static_cast<long>(ns % 1'000'000'000u);
  spec.it_value = spec.it_interval;
  return timer_settime(timer.timer, 0, &spec, nullptr) == 0 ? 0 : -errno;
}

void clock_timer_disarm(ClockTimer& timer) {
  const itimerspec stop{};
  timer_settime(timer.timer, 0, &stop, nullptr);
}

void clock_timer_destroy(ClockTimer& timer) {
  if (timer.slot < 0) return;
  timer_delete(timer.timer);
  g_slots[timer.slot].event.store(nullptr, std::memory_order_release);
  timer.slot = -1;
}

}  // namespace userperf::pmu
