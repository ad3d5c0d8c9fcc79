// bpf_get_current_task's synthetic task (bpf/perf/current_task.hpp): what a kernel read at each
// address gives, where the modelled members end, and the helpers' zeroing on a failed read.
#include "bpf/perf/current_task.hpp"

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

#include "bpf/isa/insn.hpp"
#include "bpf/perf/perf_event_ctx.hpp"
#include "bpf/perf/perf_helpers.hpp"
#include "bpf/runtime/bpf_object.hpp"
#include "support/current_task_seen.hpp"

namespace userperf::bpf {
namespace {

// A made-up kernel: members where no real kernel has them, so the offsets come from the layout.
KernelTaskLayout test_layout() {
  KernelTaskLayout t;
  t.present = true;
  t.task_size = 4096;
  t.stack = {16, 8};
  t.pid = {100, 4};
  t.tgid = {104, 4};
  t.comm = {200, 16};
  t.real_parent = {300, 8};
  t.group_leader = {308, 8};
  t.thread_fsbase = {1000, 8};
  t.mm = {400, 8};
  t.mm_size = 1000;
  t.mm_start_stack = {16, 8};
  t.mm_arg_start = {24, 8};
  t.mm_arg_end = {32, 8};
  return t;
}

struct Reader {
  KernelTaskLayout layout = test_layout();
  std::uint64_t regs[PERF_REG_X86_64_MAX] = {};
  Reader() {
    for (int i = 0; i < PERF_REG_X86_64_MAX; ++i) regs[i] = 0x5000 + static_cast<unsigned>(i);
  }
  TaskReadContext ctx() const { return {&layout, regs}; }
  template <class T>
  int read(std::uint64_t addr, T& out) const {
    return read_synthetic_kernel(ctx(), addr, &out, sizeof out);
  }
};

std::uint64_t self() {
  return synthetic_task_address(static_cast<std::uint32_t>(gettid()));
}

TEST(CurrentTask, EachThreadHasItsOwnTaskInTheKernelHalf) {
  const std::uint64_t mine = self();
  EXPECT_GE(mine, 0xffff800000000000ull);
  std::uint64_t other = 0;
  std::thread([&] { other = self(); }).join();
  EXPECT_NE(mine, other);
}

TEST(CurrentTask, IdsReadAtTheLayoutsOffsets) {
  const Reader r;
  std::int32_t v = 0;
  ASSERT_EQ(r.read(self() + 100, v), 0);
  EXPECT_EQ(v, gettid());
  ASSERT_EQ(r.read(self() + 104, v), 0);
  EXPECT_EQ(v, getpid());
  // Two adjacent members in one read; part of one member.
  std::uint64_t both = 0;
  ASSERT_EQ(r.read(self() + 100, both), 0);
  EXPECT_EQ(both, static_cast<std::uint32_t>(gettid()) |
                      (std::uint64_t{static_cast<std::uint32_t>(getpid())} << 32));
  std::uint16_t high = 0;
  ASSERT_EQ(r.read(self() + 102, high), 0);
  EXPECT_EQ(high, static_cast<std::uint32_t>(gettid()) >> 16);
}

TEST(CurrentTask, ReadsLeavingTheModelledMembersFault) {
  const Reader r;
  std::uint64_t word = 0;
  std::uint8_t byte = 0;
  EXPECT_EQ(r.read(self() + 104, word), -EFAULT);  // tgid, then 4 unmodelled bytes
  EXPECT_EQ(r.read(self() + 99, byte), -EFAULT);   // just before pid
  EXPECT_EQ(r.read(self() + 108, byte), -EFAULT);  // just after tgid
  EXPECT_EQ(r.read(self() + 0, word), -EFAULT);
  EXPECT_EQ(r.read(self() + 4096, word), -EFAULT);          // past the task
  EXPECT_EQ(r.read(0xffffffff81000000ull, word), -EFAULT);  // kernel text: not modelled
  EXPECT_EQ(r.read(synthetic_task_address(4194303) + 100, word), -EFAULT);  // nobody's task
  EXPECT_EQ(r.read(~0ull - 3, word), -EFAULT);                              // would wrap
  // Not kernel memory at all (x86-64's copy_from_kernel_nofault_allowed): -ERANGE.
  EXPECT_EQ(r.read(reinterpret_cast<std::uintptr_t>(&word), byte), -ERANGE);
  EXPECT_EQ(r.read(0x0000900000000000ull, byte), -ERANGE);  // non-canonical
  // Zero bytes: nothing to read, as the kernel.
  EXPECT_EQ(read_synthetic_kernel(r.ctx(), self() + 1, &word, 0), 0);
}

TEST(CurrentTask, CommIsTheThreadsName) {
  char saved[16] = {};
  prctl(PR_GET_NAME, saved);
  prctl(PR_SET_NAME, "task-comm-test");
  const Reader r;
  char comm[16] = {};
  EXPECT_EQ(r.read(self() + 200, comm), 0);
  EXPECT_STREQ(comm, "task-comm-test");
  char str[32];
  EXPECT_EQ(read_synthetic_kernel_string(r.ctx(), self() + 200, str, sizeof str), 15);
  EXPECT_STREQ(str, "task-comm-test");
  EXPECT_EQ(read_synthetic_kernel_string(r.ctx(), self() + 200, str, 5), 5);
  EXPECT_STREQ(str, "task");
  // "task-comm-test" has 14 characters: its NUL is at 214; 216 is past comm, not modelled.
  EXPECT_EQ(read_synthetic_kernel_string(r.ctx(), self() + 213, str, 3), 2);
  EXPECT_STREQ(str, "t");
  EXPECT_EQ(read_synthetic_kernel_string(r.ctx(), self() + 215, str, 2), 1);
  EXPECT_EQ(read_synthetic_kernel_string(r.ctx(), self() + 216, str, 2), -EFAULT);
  EXPECT_EQ(read_synthetic_kernel_string(r.ctx(), 0x1000, str, 2), -ERANGE);
  // A name of 15 characters fills comm: a longer read stops at its NUL.
  prctl(PR_SET_NAME, "fifteen-chars-x");
  EXPECT_EQ(read_synthetic_kernel_string(r.ctx(), self() + 200, str, sizeof str), 16);
  prctl(PR_SET_NAME, saved);
}

TEST(CurrentTask, ParentLeaderAndFsBase) {
  const Reader r;
  std::uint64_t parent = 0;
  ASSERT_EQ(r.read(self() + 300, parent), 0);
  EXPECT_EQ(parent, synthetic_task_address(static_cast<std::uint32_t>(getppid())));
  std::int32_t id = 0;
  ASSERT_EQ(r.read(parent + 104, id), 0);
  EXPECT_EQ(id, getppid());
  EXPECT_EQ(r.read(parent + 100, id), -EFAULT);  // the parent's pid is not modelled
  std::uint64_t fsbase = 0;
  ASSERT_EQ(r.read(self() + 1000, fsbase), 0);
  unsigned long expected = 0;
  syscall(SYS_arch_prctl, ARCH_GET_FS, &expected);
  EXPECT_EQ(fsbase, expected);
  EXPECT_EQ(fsbase, reinterpret_cast<std::uintptr_t>(pthread_self()));  // glibc's TCB
  // From another thread: the leader is this process's main thread, another task.
  std::thread([&] {
    std::uint64_t leader = 0;
    ASSERT_EQ(r.read(self() + 308, leader), 0);
    EXPECT_EQ(leader, synthetic_task_address(static_cast<std::uint32_t>(getpid())));
    EXPECT_NE(leader, self());
    std::int32_t v = 0;
    ASSERT_EQ(r.read(leader + 100, v), 0);
    EXPECT_EQ(v, getpid());
    ASSERT_EQ(r.read(leader + 104, v), 0);
    EXPECT_EQ(v, getpid());
    std::uint64_t leaders_parent = 0;
    ASSERT_EQ(r.read(leader + 300, leaders_parent), 0);
    EXPECT_EQ(leaders_parent, parent);
    char comm[16];
    EXPECT_EQ(r.read(leader + 200, comm), -EFAULT);  // only the calling thread's comm
    EXPECT_EQ(r.read(leader + 1000, fsbase), -EFAULT);
  }).join();
}

TEST(CurrentTask, TheMmHoldsTheProcessesStackAndArguments) {
  const Reader r;
  std::uint64_t mm = 0;
  ASSERT_EQ(r.read(self() + 400, mm), 0);
  EXPECT_EQ(mm, synthetic_task_address(static_cast<std::uint32_t>(getpid())) + kTaskMmOffset);
  const testing::ProcStatMm expected = testing::proc_stat_mm();
  std::uint64_t v[3] = {};
  ASSERT_EQ(r.read(mm + 16, v), 0);
  EXPECT_EQ(v[0], expected.start_stack);
  EXPECT_EQ(v[1], expected.arg_start);
  EXPECT_EQ(v[2], expected.arg_end);
  EXPECT_NE(v[1], 0u);
  std::uint64_t word = 0;
  EXPECT_EQ(r.read(mm + 8, word), -EFAULT);
  EXPECT_EQ(r.read(mm + 40, word), -EFAULT);
  EXPECT_EQ(r.read(mm + 1000, word), -EFAULT);
  std::thread([&] {  // another thread of the process: the same mm
    std::uint64_t other = 0;
    ASSERT_EQ(r.read(self() + 400, other), 0);
    EXPECT_EQ(other, mm);
  })
      .join();
}

TEST(CurrentTask, TheStackTopHoldsTheRunsRegisters) {
  const Reader r;
  std::uint64_t stack = 0;
  ASSERT_EQ(r.read(self() + 16, stack), 0);
  EXPECT_EQ(stack, self() + kTaskStackOffset);
  std::uint64_t pt_regs[21] = {};
  ASSERT_EQ(r.read(stack + kThreadSize - sizeof pt_regs, pt_regs), 0);
  EXPECT_EQ(pt_regs[16], r.regs[PERF_REG_X86_IP]);  // uapi pt_regs: ip at 128
  EXPECT_EQ(pt_regs[19], r.regs[PERF_REG_X86_SP]);  // sp at 152
  EXPECT_EQ(pt_regs[0], r.regs[PERF_REG_X86_R15]);
  EXPECT_EQ(pt_regs[15], 0u);  // orig_ax: no perf register
  std::uint64_t word = 0;
  EXPECT_EQ(r.read(stack, word), -EFAULT);  // the rest of the stack
  EXPECT_EQ(r.read(stack + kThreadSize - sizeof pt_regs - 8, word), -EFAULT);
  EXPECT_EQ(r.read(stack + kThreadSize, word), -EFAULT);
  std::thread([&] {  // another thread's stack
    EXPECT_EQ(r.read(stack + kThreadSize - 8, word), -EFAULT);
  })
      .join();
}

TEST(CurrentTask, NoLayoutOrAnAbsentMemberFaults) {
  Reader r;
  r.layout.thread_fsbase = {};
  std::uint64_t word = 0;
  EXPECT_EQ(r.read(self() + 1000, word), -EFAULT);
  r.layout = KernelTaskLayout{};
  std::int32_t id = 0;
  EXPECT_EQ(r.read(self() + 100, id), -EFAULT);
  EXPECT_EQ(read_synthetic_kernel(TaskReadContext{nullptr, r.regs}, self() + 100, &id, 4), -EFAULT);
}

// The helpers as a program calls them: a failed read zeroes dst; the legacy probe_read reads user
// memory below TASK_SIZE and the synthetic task above it.
TEST(CurrentTask, HelpersZeroTheBufferOnAFailedRead) {
  const std::vector<HelperFn> table = perf_event_helper_table();
  const KernelTaskLayout layout = test_layout();
  core::SampleData sample;
  PerfEventRunCtx run{&sample, kNoRegs, nullptr, &layout};
  std::uint64_t buffer[4];
  const MemoryRegion region{reinterpret_cast<std::uintptr_t>(buffer),
                            reinterpret_cast<std::uintptr_t>(buffer + 4), true};
  CallContext call;
  call.env = &run;
  call.regions = {&region, 1};
  const auto at = [&](int i) { return reinterpret_cast<std::uint64_t>(&buffer[i]); };
  const std::uint64_t task = table[BPF_FUNC_get_current_task](0, 0, 0, 0, 0, call);
  EXPECT_EQ(task, self());
  std::memset(buffer, 0xab, sizeof buffer);
  EXPECT_EQ(
      static_cast<std::int64_t>(table[BPF_FUNC_probe_read_kernel](at(0), 8, task + 8, 0, 0, call)),
      -EFAULT);
  EXPECT_EQ(buffer[0], 0u);
  EXPECT_EQ(
      static_cast<std::int64_t>(table[BPF_FUNC_probe_read_kernel](at(1), 8, at(2), 0, 0, call)),
      -ERANGE);
  EXPECT_EQ(buffer[1], 0u);
  EXPECT_EQ(table[BPF_FUNC_probe_read_kernel](at(0), 4, task + 100, 0, 0, call), 0u);
  EXPECT_EQ(static_cast<std::uint32_t>(buffer[0]), static_cast<std::uint32_t>(gettid()));
  buffer[3] = 0x1122334455667788ull;
  EXPECT_EQ(table[BPF_FUNC_probe_read](at(2), 8, at(3), 0, 0, call), 0u);
  EXPECT_EQ(buffer[2], 0x1122334455667788ull);
  EXPECT_EQ(table[BPF_FUNC_probe_read](at(2), 4, task + 104, 0, 0, call), 0u);
  EXPECT_EQ(static_cast<std::uint32_t>(buffer[2]), static_cast<std::uint32_t>(getpid()));
  std::memset(buffer, 0xab, sizeof buffer);
  EXPECT_EQ(static_cast<std::int64_t>(
                table[BPF_FUNC_probe_read_kernel_str](at(0), 16, task + 216, 0, 0, call)),
            -EFAULT);
  EXPECT_EQ(buffer[0], 0u);
  EXPECT_EQ(buffer[1], 0u);
  // dst outside the run's memory: -EFAULT, nothing written.
  EXPECT_EQ(static_cast<std::int64_t>(
                table[BPF_FUNC_probe_read_kernel](at(3), 16, task + 100, 0, 0, call)),
            -EFAULT);
}

}  // namespace
}  // namespace userperf::bpf

namespace userperf::bpf {
namespace {

// A program calling bpf_get_current_task needs the kernel's layout in its image: without it the
// runtime refuses to load it rather than hand out a task nobody laid out.
TEST(CurrentTask, AProgramCallingItNeedsTheLayout) {
  ObjectImage image;
  image.license = "GPL";
  image.programs.push_back({"task",
                            "perf_event",
                            BPF_PROG_TYPE_PERF_EVENT,
                            {make_insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_task),
                             make_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)},
                            false});
  ProgramLoadOptions options;
  options.helpers = perf_event_helper_table();
  options.ctx_layout = &perf_event_ctx_layout();
  auto without = BpfObject::create(image, nullptr);
  ASSERT_TRUE(without) << without.error().message;
  auto refused = LoadedProgram::load(*without, 0, options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ENOENT);
  EXPECT_NE(refused.error().message.find("no task_struct layout"), std::string::npos);
  image.task_layout = test_layout();
  auto with = BpfObject::create(image, nullptr);
  ASSERT_TRUE(with) << with.error().message;
  auto loaded = LoadedProgram::load(*with, 0, options);
  EXPECT_TRUE(loaded) << loaded.error().message;
}

}  // namespace
}  // namespace userperf::bpf

namespace userperf::bpf {
namespace {

// bpf_find_vma's synthetic vma, file, dentry and name, in the calling thread's slot: the mapping
// the run context holds, at a made-up kernel's offsets; nothing without a mapping.
TEST(CurrentTask, TheFoundVmaItsFileDentryAndName) {
  KernelTaskLayout layout = test_layout();
  layout.vma_size = 200;
  layout.vma_start = {0, 8};
  layout.vma_end = {8, 8};
  layout.vma_flags = {32, 8};
  layout.vma_pgoff = {120, 8};
  layout.vma_file = {160, 8};
  layout.file_size = 256;
  layout.file_dentry = {16, 8};
  layout.dentry_size = 192;
  layout.dentry_name = {40, 8};
  layout.dentry_iname = {56, 40};
  ASSERT_TRUE(layout.consistent());
  FoundVma vma;
  vma.valid = true;
  vma.start = 0x400000;
  vma.end = 0x401000;
  vma.flags = 0x5;
  vma.pgoff = 3;
  vma.has_file = true;
  const std::string name = "a-binary-whose-name-is-longer-than-forty-bytes";
  std::memcpy(vma.name, name.c_str(), name.size() + 1);
  const TaskReadContext ctx{&layout, nullptr, &vma};
  const std::uint64_t at = synthetic_task_address(static_cast<std::uint32_t>(gettid()));
  const std::uint64_t v = at + kTaskVmaOffset;
  std::uint64_t value = 0;
  ASSERT_EQ(read_synthetic_kernel(ctx, v + 0, &value, 8), 0);
  EXPECT_EQ(value, 0x400000u);
  ASSERT_EQ(read_synthetic_kernel(ctx, v + 8, &value, 8), 0);
  EXPECT_EQ(value, 0x401000u);
  ASSERT_EQ(read_synthetic_kernel(ctx, v + 32, &value, 8), 0);
  EXPECT_EQ(value, 0x5u);
  ASSERT_EQ(read_synthetic_kernel(ctx, v + 120, &value, 8), 0);
  EXPECT_EQ(value, 3u);
  ASSERT_EQ(read_synthetic_kernel(ctx, v + 160, &value, 8), 0);
  EXPECT_EQ(value, at + kTaskFileOffset);
  EXPECT_EQ(read_synthetic_kernel(ctx, v + 16, &value, 8), -EFAULT);  // not modelled
  ASSERT_EQ(read_synthetic_kernel(ctx, at + kTaskFileOffset + 16, &value, 8), 0);
  EXPECT_EQ(value, at + kTaskDentryOffset);
  ASSERT_EQ(read_synthetic_kernel(ctx, at + kTaskDentryOffset + 40, &value, 8), 0);
  EXPECT_EQ(value, at + kTaskNameOffset);
  char iname[40];
  ASSERT_EQ(read_synthetic_kernel(ctx, at + kTaskDentryOffset + 56, iname, sizeof iname), 0);
  EXPECT_EQ(std::string(iname), name.substr(0, 39));  // DNAME_INLINE_LEN - 1, NUL-padded
  char full[64] = {};
  EXPECT_EQ(read_synthetic_kernel_string(ctx, at + kTaskNameOffset, full, sizeof full),
            static_cast<long>(name.size() + 1));
  EXPECT_EQ(std::string(full), name);
  // Past the name's NUL: not modelled.
  EXPECT_EQ(read_synthetic_kernel(ctx, at + kTaskNameOffset + name.size() + 1, &value, 1), -EFAULT);
  // An anonymous mapping: vm_file 0, no file, dentry or name.
  vma.has_file = false;
  ASSERT_EQ(read_synthetic_kernel(ctx, v + 160, &value, 8), 0);
  EXPECT_EQ(value, 0u);
  EXPECT_EQ(read_synthetic_kernel(ctx, at + kTaskFileOffset + 16, &value, 8), -EFAULT);
  EXPECT_EQ(read_synthetic_kernel(ctx, at + kTaskDentryOffset + 56, iname, 8), -EFAULT);
  // No mapping held (no bpf_find_vma callback running): the vma faults.
  const TaskReadContext none{&layout, nullptr, nullptr};
  EXPECT_EQ(read_synthetic_kernel(none, v, &value, 8), -EFAULT);
  vma.valid = false;
  EXPECT_EQ(read_synthetic_kernel(ctx, v, &value, 8), -EFAULT);
}

}  // namespace
}  // namespace userperf::bpf
