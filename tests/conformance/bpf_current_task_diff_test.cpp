// bpf_get_current_task in the kernel and in userperf: the same clang-compiled CO-RE program
// (tests/data/bpf/progs/current_task.bpf.c, relocated by userperf's loader) runs on task-clock
// overflows of a thread, once attached to a kernel perf event, once to a userperf one; what each
// read of its task (ids, parent, leader, comm, fs base, mm's start_stack/arg_start/arg_end) and of
// a user-half address through probe_read_kernel (-ERANGE) must be the same. Where they differ on
// purpose (a member userperf does not model: the kernel reads real memory, userperf -EFAULT) is not
// compared here.
#include <asm/prctl.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include "bpf/loader/elf_loader.hpp"
#include "support/current_task_seen.hpp"
#include "support/kernel_bpf.hpp"
#include "support/test_events.hpp"
#include "userperf/userperf.h"

namespace userperf::testing {
namespace {

const std::string kObject = std::string(USERPERF_BPF_OBJECT_DIR) + "/progs/current_task.bpf.o";

perf_event_attr task_clock() {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = 1'000'000;
  attr.sample_type = PERF_SAMPLE_IP;
  attr.disabled = 1;
  return attr;
}

// Runs `body` on a new thread named "curtask-diff", returns its tid and its fs base.
pid_t on_named_thread(const std::function<void()>& body, std::uint64_t& fsbase) {
  pid_t tid = 0;
  std::thread([&] {
    prctl(PR_SET_NAME, "curtask-diff");
    tid = static_cast<pid_t>(syscall(SYS_gettid));
    unsigned long base = 0;
    syscall(SYS_arch_prctl, ARCH_GET_FS, &base);
    fsbase = base;
    body();
  }).join();
  return tid;
}

TEST(CurrentTaskDiff, KernelAndUserperfReadTheSameTask) {
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) GTEST_SKIP() << "no kernel BTF";
  auto image = bpf::load_elf_file(kObject);
  ASSERT_TRUE(image) << image.error().message;

  // The kernel.
  auto kernel = kernel_bpf::load_image_program(*image, 0, BPF_PROG_TYPE_PERF_EVENT);
  if (kernel_bpf::kernel_refuses_bpf(kernel.error)) GTEST_SKIP() << "bpf() refused";
  ASSERT_EQ(kernel.error, 0) << kernel.log;
  std::uint64_t kernel_fsbase = 0;
  const pid_t kernel_tid = on_named_thread(
      [&] {
        perf_event_attr attr = task_clock();
        const int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
        ASSERT_GE(fd, 0) << strerror(errno);
        ASSERT_EQ(ioctl(fd, PERF_EVENT_IOC_SET_BPF, kernel.program.get()), 0) << strerror(errno);
        ASSERT_EQ(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
        spin_thread_cpu(60'000'000);
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
        close(fd);
      },
      kernel_fsbase);
  const std::uint32_t zero = 0;
  CurrentTaskSeen in_kernel{};
  ASSERT_EQ(bpf_map_lookup_elem(kernel.maps[0].get(), &zero, &in_kernel), 0) << strerror(errno);
  ASSERT_GT(in_kernel.runs, 0u);

  // userperf.
  char log[16384] = {};
  const int prog = userperf_bpf_prog_load(kObject.c_str(), "read_current_task", log, sizeof log);
  ASSERT_GE(prog, 0) << strerror(errno) << "\n" << log;
  const int seen = userperf_bpf_map_fd(prog, "seen");
  std::uint64_t userperf_fsbase = 0;
  const pid_t userperf_tid = on_named_thread(
      [&] {
        perf_event_attr attr = task_clock();
        const int fd = userperf_perf_event_open(&attr, 0, -1, -1, 0);
        ASSERT_GE(fd, 0) << strerror(errno);
        {
          MappedRing ring(fd, 16);
          ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog)),
                    0);
          ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
          spin_thread_cpu(60'000'000);
          userperf_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
        }
        userperf_close(fd);
      },
      userperf_fsbase);
  CurrentTaskSeen in_userperf{};
  ASSERT_EQ(userperf_bpf_map_lookup_elem(seen, &zero, &in_userperf), 0);
  ASSERT_GT(in_userperf.runs, 0u);
  userperf_close(seen);
  userperf_close(prog);

  for (const CurrentTaskSeen* s : {&in_kernel, &in_userperf}) {
    const char* who = s == &in_kernel ? "kernel" : "userperf";
    EXPECT_EQ(s->pid, s == &in_kernel ? kernel_tid : userperf_tid) << who;
    EXPECT_EQ(s->tgid, getpid()) << who;
    EXPECT_GE(s->task, 0xffff800000000000ull) << who;
    EXPECT_EQ(s->compat_user, s->task) << who;  // the legacy probe_read of the map value
  }
  EXPECT_EQ(in_userperf.parent_tgid, in_kernel.parent_tgid);
  EXPECT_EQ(in_userperf.leader_pid, in_kernel.leader_pid);
  EXPECT_EQ(in_userperf.leader_tgid, in_kernel.leader_tgid);
  EXPECT_STREQ(in_userperf.comm, in_kernel.comm);
  EXPECT_EQ(in_userperf.comm_len, in_kernel.comm_len);
  EXPECT_EQ(in_kernel.fsbase, kernel_fsbase);  // each thread's own ARCH_GET_FS
  EXPECT_EQ(in_userperf.fsbase, userperf_fsbase);
  EXPECT_EQ(in_kernel.user_err, -ERANGE);  // probe_read_kernel of a user-half address
  EXPECT_EQ(in_userperf.user_err, in_kernel.user_err);
  EXPECT_EQ(in_userperf.compat_err, in_kernel.compat_err);
  EXPECT_EQ(in_userperf.mm_start_stack, in_kernel.mm_start_stack);
  EXPECT_EQ(in_userperf.mm_arg_start, in_kernel.mm_arg_start);
  EXPECT_EQ(in_userperf.mm_arg_end, in_kernel.mm_arg_end);
  EXPECT_NE(in_kernel.mm_arg_start, 0u);
  std::printf("kernel: pid %d tgid %d parent %d leader %d comm '%s' (%d) user_err %lld\n",
              in_kernel.pid, in_kernel.tgid, in_kernel.parent_tgid, in_kernel.leader_pid,
              in_kernel.comm, in_kernel.comm_len, static_cast<long long>(in_kernel.user_err));
}

}  // namespace
}  // namespace userperf::testing
