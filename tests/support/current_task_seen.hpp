// What tests/data/bpf/progs/current_task.bpf.c writes to its `seen` map (its struct seen), for
// the tests that run it on userperf (unit/bpf/perf/current_task_e2e_test.cpp) and in the kernel
// (conformance/bpf_current_task_diff_test.cpp).
#pragma once

#include <time.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace userperf::testing {

struct CurrentTaskSeen {
  std::uint64_t runs;
  std::uint64_t task;
  std::int32_t pid;
  std::int32_t tgid;
  std::int32_t parent_tgid;
  std::int32_t leader_pid;
  std::int32_t leader_tgid;
  std::int32_t comm_len;
  char comm[16];
  std::uint64_t fsbase;
  std::uint64_t stack_ip;
  std::uint64_t stack_sp;
  std::uint64_t ctx_ip;
  std::uint64_t ctx_sp;
  std::int64_t unmodelled_err;
  std::uint64_t unmodelled_dst;
  std::int64_t user_err;
  std::uint64_t compat_user;
  std::int64_t compat_err;
  std::uint64_t mm_start_stack;
  std::uint64_t mm_arg_start;
  std::uint64_t mm_arg_end;
};

// startstack, arg_start and arg_end of /proc/self/stat (fields 28, 48, 49).
struct ProcStatMm {
  std::uint64_t start_stack = 0;
  std::uint64_t arg_start = 0;
  std::uint64_t arg_end = 0;
};
inline ProcStatMm proc_stat_mm() {
  std::ifstream file("/proc/self/stat");
  std::string line;
  std::getline(file, line);
  std::istringstream fields(line.substr(line.rfind(')') + 2));
  ProcStatMm mm;
  std::string value;
  for (int field = 3; fields >> value; ++field) {
    if (field == 28) mm.start_stack = std::stoull(value);
    if (field == 48) mm.arg_start = std::stoull(value);
    if (field == 49) mm.arg_end = std::stoull(value);
  }
  return mm;
}

// Burns `ns` of the calling thread's CPU time (what task-clock counts), however loaded the
// machine is, in user code: the thread CPU clock is a system call, read only when the wall clock
// (vDSO) says the time could be used up. Read in every iteration, it made the thread a
// system-call-dense one, which beside busy programs the scheduler switches out at that call before
// any tick, so its CPU-time timer never fired and some runs took no sample (docs/record.md,
// Limits; CgroupEndToEnd and CurrentTaskDiff failed so beside two fuzz campaigns).
inline void spin_thread_cpu(std::uint64_t ns) {
  const auto read = [](clockid_t clock) {
    timespec ts{};
    clock_gettime(clock, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(ts.tv_nsec);
  };
  const std::uint64_t end = read(CLOCK_THREAD_CPUTIME_ID) + ns;
  std::uint64_t wall_end = read(CLOCK_MONOTONIC) + ns;
  volatile std::uint64_t sink = 0;
  for (;;) {
    for (int i = 0; i < 1000; ++i) sink = sink + 1;
    const std::uint64_t now = read(CLOCK_MONOTONIC);
    if (now < wall_end) continue;
    const std::uint64_t cpu = read(CLOCK_THREAD_CPUTIME_ID);
    if (cpu >= end) return;
    wall_end = now + (end - cpu);
  }
}

}  // namespace userperf::testing
