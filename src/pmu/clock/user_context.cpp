#include "pmu/clock/user_context.hpp"

#include <linux/perf_event.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "support/task_ids.hpp"

extern "C" void* __libc_stack_end;  // glibc: the stack pointer at _start

namespace userperf::pmu {

namespace {

// The first address past user space: 2^56 with 5-level page tables, 2^47 with 4 levels. A "return
// address" at or above it is not one: a program built without frame pointers leaves anything in
// RBP, and a word of -1 stored as a frame would read as a context marker (PERF_CONTEXT_MAX up)
// to every consumer (hotspot's perfparser warned on -g files of gcc).
constexpr std::uint64_t kUserAddressEnd = 1ull << 56;

// The stacks of other threads, as note_thread_stack told them.
std::mutex g_noted_mutex;
std::vector<std::pair<pid_t, StackBounds>> g_noted_stacks;

}  // namespace

void sample_regs_of(const mcontext_t& mc, core::SampleRegs& regs) {
  // perf's x86-64 register numbers and where the signal frame keeps each.
  static constexpr struct {
    int perf;
    int greg;
  } kFrameRegs[] = {
      {PERF_REG_X86_AX, REG_RAX},    {PERF_REG_X86_BX, REG_RBX},  {PERF_REG_X86_CX, REG_RCX},
      {PERF_REG_X86_DX, REG_RDX},    {PERF_REG_X86_SI, REG_RSI},  {PERF_REG_X86_DI, REG_RDI},
      {PERF_REG_X86_BP, REG_RBP},    {PERF_REG_X86_SP, REG_RSP},  {PERF_REG_X86_IP, REG_RIP},
      {PERF_REG_X86_FLAGS, REG_EFL}, {PERF_REG_X86_R8, REG_R8},   {PERF_REG_X86_R9, REG_R9},
      {PERF_REG_X86_R10, REG_R10},   {PERF_REG_X86_R11, REG_R11}, {PERF_REG_X86_R12, REG_R12},
      {PERF_REG_X86_R13, REG_R13},   {PERF_REG_X86_R14, REG_R14}, {PERF_REG_X86_R15, REG_R15},
  };
  regs.abi = PERF_SAMPLE_REGS_ABI_64;
  for (const auto& r : kFrameRegs) {
    regs.values[r.perf] = static_cast<std::uint64_t>(mc.gregs[r.greg]);
  }
  regs.values[PERF_REG_X86_CS] = static_cast<std::uint64_t>(mc.gregs[REG_CSGSFS] & 0xffff);
  regs.values[PERF_REG_X86_SS] = 0x2b;  // the user data segment on x86-64 Linux
}

// Frame-pointer walk bounded to [sp, stack_high), which the caller checked lies inside the
// sampled thread's own stack: it reads nothing else, so it cannot fault. Frames outside the bounds
// or not moving upwards, and return addresses of 0 or outside user space, end the walk. The bound
// is written as stack_high - fp: fp + 16 wraps for an RBP of -16 or -8 (a function using RBP as a
// scratch register).
std::uint64_t walk_user_frames(std::uint64_t ip, std::uint64_t fp, std::uint64_t sp,
                               std::uint64_t stack_high, std::uint64_t* out, int max) {
  int n = 0;
  out[n++] = PERF_CONTEXT_USER;
  out[n++] = ip;
  while (n < max && fp >= sp && fp < stack_high && stack_high - fp >= 16 && (fp & 7) == 0) {
    const auto* frame = reinterpret_cast<const std::uint64_t*>(fp);
    const std::uint64_t ret = frame[1];
    if (ret == 0 || ret >= kUserAddressEnd) break;
    out[n++] = ret;
    if (frame[0] <= fp) break;
    fp = frame[0];
  }
  return static_cast<std::uint64_t>(n);
}

// Whether the signal was delivered on the way out of a system call rather than into interrupted
// user code. The syscall instruction leaves the return address in RCX and RFLAGS in R11, and the
// kernel's entry saves both as they are; the signal frame then has RIP == RCX (RCX - 2 when the
// call is restarted) and EFLAGS == R11. User code interrupted anywhere else has no reason to hold
// its own address in RCX; the one ambiguous place, the instruction right after a syscall, is a
// system-call exit in all but name.
//
// A tick that came while the thread was in the call can also land just past the return: a
// paravirtualized guest (PVM) holds interrupts through its kernel's exit path and delivers them
// at the return address or an instruction later, after the wrapper's `cmp rax, -4095` (RIP ==
// RCX + 6; its arithmetic flags differ from R11's, the control flags do not). On a sqlite3 run
// doing 300k pread64/pwrite64 a second, kernel perf's cpu-clock:u put 18% of its samples at those
// two places, and userperf, recognising only the first, 3% at the second (each a tick's periods).
bool delivered_at_syscall_exit(const mcontext_t& mc) {
  const auto ip = static_cast<std::uint64_t>(mc.gregs[REG_RIP]);
  const auto cx = static_cast<std::uint64_t>(mc.gregs[REG_RCX]);
  const auto r11 = static_cast<std::uint64_t>(mc.gregs[REG_R11]);
  const auto flags = static_cast<std::uint64_t>(mc.gregs[REG_EFL]);
  if ((cx == ip || cx == ip + 2) && r11 == flags) return true;
  constexpr std::uint64_t kArithmeticFlags = 0x8d5;  // CF PF AF ZF SF OF
  constexpr std::uint64_t kReturnSequence = 8;       // cmp rax, imm32 (6 bytes); ja rel8 (2)
  return ip > cx && ip - cx <= kReturnSequence && ((r11 ^ flags) & ~kArithmeticFlags) == 0;
}

// The main thread's stack comes from
// __libc_stack_end (the stack pointer _start left, above every frame of the program) and
// RLIMIT_STACK, not from pthread_getattr_np: for the main thread that reads the whole of
// /proc/self/maps, a cost every recorded process would pay at its start. The kernel keeps other
// mappings max(RLIMIT_STACK, 128 MiB) below the stack's top (mmap_base), so nothing but the stack
// lies in [high - min(RLIMIT_STACK, 128 MiB), high).
StackBounds main_thread_stack() {
  constexpr std::uint64_t kStackGap = 128ull << 20;
  const std::uint64_t top = reinterpret_cast<std::uint64_t>(__libc_stack_end);
  const std::uint64_t page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  // The page holding __libc_stack_end is mapped to its end (argv and the environment lie above).
  const std::uint64_t high = (top + page) & ~(page - 1);
  rlimit limit{};
  const std::uint64_t reach = getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur < kStackGap
                                  ? limit.rlim_cur
                                  : kStackGap;
  return {high > reach ? high - reach : 0, high};
}

StackBounds current_thread_stack() {
  const StackBounds initial = main_thread_stack();
  // A fork child of another thread runs on that thread's stack: pthread_getattr_np knows it.
  const auto here = reinterpret_cast<std::uint64_t>(__builtin_frame_address(0));
  if (support::current_pid() == support::current_tid() && here >= initial.low &&
      here < initial.high) {
    return initial;
  }
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return {};
  void* base = nullptr;
  std::size_t size = 0;
  const int rc = pthread_attr_getstack(&attr, &base, &size);
  pthread_attr_destroy(&attr);
  if (rc != 0) return {};
  const auto low = reinterpret_cast<std::uint64_t>(base);
  return {low, low + size};
}

StackBounds noted_thread_stack(pid_t tid) {
  std::lock_guard lock(g_noted_mutex);
  for (const auto& [noted, stack] : g_noted_stacks) {
    if (noted == tid) return stack;
  }
  return {};
}

void note_thread_stack(pid_t tid, std::uint64_t low, std::uint64_t high) {
  std::lock_guard lock(g_noted_mutex);
  std::erase_if(g_noted_stacks, [tid](const auto& noted) { return noted.first == tid; });
  if (low < high) g_noted_stacks.emplace_back(tid, StackBounds{low, high});
}

}  // namespace userperf::pmu
