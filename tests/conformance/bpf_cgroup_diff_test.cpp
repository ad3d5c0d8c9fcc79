// The cgroup v2 helpers against the kernel's own: a BPF_PROG_TYPE_RAW_TRACEPOINT program run with
// BPF_PROG_TEST_RUN runs in the calling thread's context (no CPU given: on the current one, as
// `current`), so the kernel's bpf_current_task_under_cgroup, bpf_get_current_cgroup_id and
// bpf_get_current_ancestor_cgroup_id answer for the same thread as userperf's. Both run in a forked
// child moved into parent/child of a test cgroup tree, with a kernel CGROUP_ARRAY and a userperf
// one holding the same cgroups; every answer is compared, and the cgroup ids also with
// name_to_handle_at's (the kernfs file handle is the kernel's cgroup id).
// Needs bpf() and cgroup2 (root); skips with the reason otherwise.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "bpf/isa/assembler.hpp"
#include "bpf/maps/map.hpp"
#include "bpf/perf/perf_helpers.hpp"
#include "support/cgroup_tree.hpp"
#include "support/kernel_bpf.hpp"

namespace userperf::bpf {
namespace {

namespace kb = userperf::testing::kernel_bpf;
using userperf::testing::CgroupTree;
using userperf::testing::inode_of;

// The questions, in result order: current_task_under_cgroup of slots 0..4 (child, parent, sibling,
// empty, past the end), get_current_cgroup_id, get_current_ancestor_cgroup_id of levels 0..3 and
// of 2^32 - 1 (the int -1).
constexpr int kSlots = 4;
constexpr std::uint64_t kLevels[] = {0, 1, 2, 3, 0xffffffffull};
constexpr int kAnswers = 5 + 1 + 5;

struct Answers {
  std::uint64_t value[kAnswers];
  std::uint64_t handle_id;  // name_to_handle_at of /proc/thread-self's cgroup: the kernel's id
};

// One raw_tracepoint program that asks every question and stores each answer in results[i].
std::string kernel_program_text(int cgroups_fd, int results_fd) {
  std::string text;
  int index = 0;
  const auto store = [&] {
    text += "stxdw [%r10-16], %r0\nstw [%r10-4], " + std::to_string(index++) +
            "\nlddw %r1, map_fd:" + std::to_string(results_fd) +
            "\nmov %r2, %r10\nadd %r2, -4\nmov %r3, %r10\nadd %r3, -16\nmov %r4, 0\n"
            "call bpf_map_update_elem\n";
  };
  for (int slot = 0; slot <= kSlots; ++slot) {
    text += "lddw %r1, map_fd:" + std::to_string(cgroups_fd) + "\nmov %r2, " +
            std::to_string(slot) + "\ncall bpf_current_task_under_cgroup\n";
    store();
  }
  text += "call bpf_get_current_cgroup_id\n";
  store();
  for (std::uint64_t level : kLevels) {
    text += "lddw %r1, " + std::to_string(level) + "\ncall bpf_get_current_ancestor_cgroup_id\n";
    store();
  }
  text += "mov %r0, 0\nexit\n";
  return text;
}

int test_run(int prog_fd) {
  bpf_attr attr{};
  attr.test.prog_fd = static_cast<std::uint32_t>(prog_fd);
  return syscall(__NR_bpf, BPF_PROG_TEST_RUN, &attr, sizeof attr) < 0 ? -errno : 0;
}

// The kernel's cgroup id of the directory: kernfs's file handle is the 64-bit id.
std::uint64_t handle_id(int dir_fd) {
  struct {
    file_handle handle;
    unsigned char bytes[64];
  } h{};
  h.handle.handle_bytes = sizeof h.bytes;
  int mount_id = 0;
  if (name_to_handle_at(dir_fd, "", &h.handle, &mount_id, AT_EMPTY_PATH) != 0) return 0;
  std::uint64_t id = 0;
  if (h.handle.handle_bytes >= sizeof id) std::memcpy(&id, h.handle.f_handle, sizeof id);
  return id;
}

class BpfCgroupDiff : public CgroupTree {};

TEST_F(BpfCgroupDiff, HelpersAnswerAsTheKernels) {
  MapSpec cgroups_spec;
  cgroups_spec.name = "cgroups";
  cgroups_spec.type = BPF_MAP_TYPE_CGROUP_ARRAY;
  cgroups_spec.key_size = 4;
  cgroups_spec.value_size = 4;
  cgroups_spec.max_entries = kSlots;
  const int cgroups_fd = kb::map_create(cgroups_spec);
  if (cgroups_fd < 0 && kb::kernel_refuses_bpf(-cgroups_fd)) {
    GTEST_SKIP() << "the kernel refuses bpf(BPF_MAP_CREATE): " << std::strerror(-cgroups_fd);
  }
  ASSERT_GE(cgroups_fd, 0) << std::strerror(-cgroups_fd);
  kb::ScopedFd kernel_cgroups(cgroups_fd);
  MapSpec results_spec = cgroups_spec;
  results_spec.name = "results";
  results_spec.type = BPF_MAP_TYPE_ARRAY;
  results_spec.value_size = 8;
  results_spec.max_entries = kAnswers;
  kb::ScopedFd results(kb::map_create(results_spec));
  ASSERT_GE(results.get(), 0);
  auto ours = Map::create(cgroups_spec);
  ASSERT_TRUE(ours.ok()) << ours.error().message;
  Map& our_cgroups = *ours.value();
  const int stored[3] = {child_fd_, parent_fd_, sibling_fd_};
  for (std::uint32_t slot = 0; slot < 3; ++slot) {
    const auto fd = static_cast<std::uint32_t>(stored[slot]);
    ASSERT_EQ(kb::map_update(kernel_cgroups.get(), &slot, &fd), 0);
    ASSERT_EQ(our_cgroups.update_elem(&slot, &fd, BPF_ANY), 0);
  }
  auto insns = assemble(kernel_program_text(kernel_cgroups.get(), results.get()));
  ASSERT_TRUE(insns.ok()) << insns.error().message;
  kb::ProgLoadResult prog = kb::prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, insns.value(), "GPL");
  ASSERT_GE(prog.fd, 0) << std::strerror(prog.error) << "\n" << prog.log;
  kb::ScopedFd program(prog.fd);

  const std::vector<HelperFn> table = perf_event_helper_table();
  const auto map_arg = reinterpret_cast<std::uint64_t>(&our_cgroups);
  struct Both {
    Answers kernel, ours;
    int run_error;
  };
  const Both both = run_in(parent_ + "/child", [&] {
    Both b{};
    b.run_error = test_run(program.get());
    for (std::uint32_t i = 0; i < kAnswers; ++i) {
      bpf_attr attr{};
      attr.map_fd = static_cast<std::uint32_t>(results.get());
      attr.key = reinterpret_cast<std::uintptr_t>(&i);
      attr.value = reinterpret_cast<std::uintptr_t>(&b.kernel.value[i]);
      syscall(__NR_bpf, BPF_MAP_LOOKUP_ELEM, &attr, sizeof attr);
    }
    CallContext call;
    int i = 0;
    for (int slot = 0; slot <= kSlots; ++slot) {
      b.ours.value[i++] = table[BPF_FUNC_current_task_under_cgroup](
          map_arg, static_cast<std::uint64_t>(slot), 0, 0, 0, call);
    }
    b.ours.value[i++] = table[BPF_FUNC_get_current_cgroup_id](0, 0, 0, 0, 0, call);
    for (std::uint64_t level : kLevels) {
      b.ours.value[i++] = table[BPF_FUNC_get_current_ancestor_cgroup_id](level, 0, 0, 0, 0, call);
    }
    return b;
  });
  ASSERT_EQ(both.run_error, 0) << std::strerror(-both.run_error);
  const char* what[kAnswers] = {"under child",    "under parent", "under sibling", "under empty",
                                "under past end", "cgroup id",    "ancestor 0",    "ancestor 1",
                                "ancestor 2",     "ancestor 3",   "ancestor -1"};
  for (int i = 0; i < kAnswers; ++i) {
    EXPECT_EQ(static_cast<std::int64_t>(both.ours.value[i]),
              static_cast<std::int64_t>(both.kernel.value[i]))
        << what[i];
  }
  // The answers are not trivially equal: the kernel saw the child's cgroup, by its id.
  EXPECT_EQ(both.kernel.value[0], 1u);
  EXPECT_EQ(static_cast<std::int64_t>(both.kernel.value[3]), -EAGAIN);
  EXPECT_EQ(static_cast<std::int64_t>(both.kernel.value[4]), -E2BIG);
  EXPECT_EQ(both.kernel.value[5], handle_id(child_fd_));
  EXPECT_EQ(both.kernel.value[5], inode_of(child_fd_));
  EXPECT_EQ(both.kernel.value[7], handle_id(parent_fd_));
}

}  // namespace
}  // namespace userperf::bpf
