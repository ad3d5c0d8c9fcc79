// bpf_get_current_task end to end: tests/data/bpf/progs/current_task.bpf.c, clang-compiled with
// CO-RE reads of task_struct (relocated against the running kernel's BTF), runs on real task-clock
// overflows of a second thread and writes what it read to a map; the test compares it with
// gettid, getpid, getppid, PR_GET_NAME and ARCH_GET_FS of that thread.
#include <asm/prctl.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include "support/current_task_seen.hpp"
#include "support/own_task_clock.hpp"
#include "userperf/userperf.h"

namespace userperf::testing {
namespace {

using Seen = CurrentTaskSeen;

TEST(CurrentTaskEndToEnd, CoreReadsOfTheTaskGiveTheThreadsIdentity) {
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
    GTEST_SKIP() << "the kernel has no BTF (/sys/kernel/btf/vmlinux): no task_struct layout";
  }
  const std::string path = std::string(USERPERF_BPF_OBJECT_DIR) + "/progs/current_task.bpf.o";
  char log[16384] = {};
  const int prog = userperf_bpf_prog_load(path.c_str(), "read_current_task", log, sizeof log);
  ASSERT_GE(prog, 0) << strerror(errno) << "\n" << log;
  const int seen = userperf_bpf_map_fd(prog, "seen");
  ASSERT_GE(seen, 0);
  const std::uint32_t zero = 0;
  Seen initial{};
  initial.unmodelled_dst = ~0ull;  // the failed read must zero it
  ASSERT_EQ(userperf_bpf_map_update_elem(seen, &zero, &initial, BPF_ANY), 0);

  // On a thread of its own, so that the task is not its group leader.
  pid_t tid = 0;
  char comm[16] = {};
  unsigned long fsbase = 0;
  std::thread worker([&] {
    prctl(PR_SET_NAME, "curtask-e2e");
    prctl(PR_GET_NAME, comm);
    tid = static_cast<pid_t>(syscall(SYS_gettid));
    syscall(SYS_arch_prctl, ARCH_GET_FS, &fsbase);
    run_on_own_task_clock(prog, 60'000'000);
  });
  worker.join();

  Seen s{};
  ASSERT_EQ(userperf_bpf_map_lookup_elem(seen, &zero, &s), 0) << strerror(errno);
  ASSERT_GT(s.runs, 0u) << "no overflow ran the program";
  EXPECT_GE(s.task, 0xffff800000000000ull);  // a kernel-half address
  EXPECT_EQ(s.pid, tid);
  EXPECT_EQ(s.tgid, getpid());
  EXPECT_NE(s.pid, s.tgid);
  EXPECT_EQ(s.parent_tgid, getppid());
  EXPECT_EQ(s.leader_pid, getpid());
  EXPECT_EQ(s.leader_tgid, getpid());
  EXPECT_STREQ(s.comm, comm);
  EXPECT_EQ(s.comm_len, static_cast<std::int32_t>(std::strlen(comm) + 1));
  EXPECT_EQ(s.fsbase, fsbase);
  EXPECT_NE(s.fsbase, 0u);
  // task_pt_regs(task): the interrupted user registers, as the context has them.
  EXPECT_EQ(s.stack_ip, s.ctx_ip);
  EXPECT_EQ(s.stack_sp, s.ctx_sp);
  EXPECT_NE(s.ctx_ip, 0u);
  EXPECT_EQ(s.unmodelled_err, -EFAULT);
  EXPECT_EQ(s.unmodelled_dst, 0u);
  EXPECT_EQ(s.user_err, -ERANGE);  // x86-64 probe_read_kernel of a user address
  EXPECT_EQ(s.compat_err, 0);
  EXPECT_EQ(s.compat_user, s.task);
  const ProcStatMm mm = proc_stat_mm();
  EXPECT_EQ(s.mm_start_stack, mm.start_stack);
  EXPECT_EQ(s.mm_arg_start, mm.arg_start);
  EXPECT_EQ(s.mm_arg_end, mm.arg_end);
  EXPECT_NE(s.mm_arg_start, 0u);
  userperf_close(seen);
  userperf_close(prog);
}

}  // namespace
}  // namespace userperf::testing
