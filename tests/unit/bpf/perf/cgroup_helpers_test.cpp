// BPF_MAP_TYPE_CGROUP_ARRAY and the cgroup v2 helpers (current_task_under_cgroup,
// get_current_cgroup_id, get_current_ancestor_cgroup_id). The errnos are the kernel's (Linux
// 6.18, raw bpf(): tests/conformance/bpf_map_diff_test.cpp compares them live). The membership
// tests build a cgroup tree under the cgroup2 mount (root needed; skipped with the reason
// otherwise) and move a forked child into it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "bpf/maps/cgroup_array.hpp"
#include "bpf/perf/current_cgroup.hpp"
#include "bpf/perf/perf_helpers.hpp"
#include "support/cgroup_tree.hpp"

namespace userperf::bpf {
namespace {

std::unique_ptr<Map> make_cgroup_array(std::uint32_t max_entries) {
  MapSpec spec;
  spec.name = "cgroups";
  spec.type = BPF_MAP_TYPE_CGROUP_ARRAY;
  spec.key_size = 4;
  spec.value_size = 4;
  spec.max_entries = max_entries;
  auto map = Map::create(spec);
  EXPECT_TRUE(map.ok()) << (map.ok() ? "" : map.error().message);
  return map.ok() ? std::move(map.value()) : nullptr;
}

int store(Map& map, std::uint32_t key, int fd) {
  const auto value = static_cast<std::uint32_t>(fd);
  return map.update_elem(&key, &value, BPF_ANY);
}

using userperf::testing::CgroupTree;
using userperf::testing::inode_of;

TEST_F(CgroupTree, ArrayStoresTheCgroupsIdAndLevel) {
  auto map = make_cgroup_array(4);
  ASSERT_NE(map, nullptr);
  ASSERT_EQ(store(*map, 0, child_fd_), 0);
  ASSERT_EQ(store(*map, 1, parent_fd_), 0);
  const auto* child = static_cast<const CgroupRef*>(map->object_at(0));
  const auto* parent = static_cast<const CgroupRef*>(map->object_at(1));
  ASSERT_NE(child, nullptr);
  ASSERT_NE(parent, nullptr);
  EXPECT_EQ(child->id, inode_of(child_fd_));
  EXPECT_EQ(parent->id, inode_of(parent_fd_));
  EXPECT_EQ(child->level, parent->level + 1);
  EXPECT_EQ(parent->level, 1u);  // made under the mount's root, the hierarchy's root
  EXPECT_EQ(map->object_at(2), nullptr);
  EXPECT_EQ(map->object_at(4), nullptr);
  // An O_PATH descriptor is a cgroup too (the kernel's fd_raw).
  const int path_fd = openat(root_, parent_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(path_fd, 0);
  EXPECT_EQ(store(*map, 2, path_fd), 0);
  close(path_fd);
  EXPECT_EQ(static_cast<const CgroupRef*>(map->object_at(2))->id, parent->id);
}

// The kernel's answers (bpf_fd_array_map_update_elem, cgroup_get_from_fd, no sys_lookup): EBADF
// for anything but a cgroup v2 directory, E2BIG past the end, EINVAL for flags other than
// BPF_ANY, ENOTSUPP (524) for every consumer lookup, ENOENT deleting an empty slot.
TEST_F(CgroupTree, ConsumerSideErrnosAreTheKernels) {
  auto map = make_cgroup_array(2);
  ASSERT_NE(map, nullptr);
  const int file = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  const int proc_dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const int cgroup_file = openat(root_, (parent_ + "/cgroup.procs").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(file, 0);
  ASSERT_GE(proc_dir, 0);
  ASSERT_GE(cgroup_file, 0);
  const int closed = dup(file);
  close(closed);
  EXPECT_EQ(store(*map, 0, file), -EBADF);
  EXPECT_EQ(store(*map, 0, proc_dir), -EBADF);
  EXPECT_EQ(store(*map, 0, cgroup_file), -EBADF);
  EXPECT_EQ(store(*map, 0, closed), -EBADF);
  EXPECT_EQ(store(*map, 0, -1), -EBADF);
  EXPECT_EQ(store(*map, 2, child_fd_), -E2BIG);
  std::uint32_t key = 0;
  auto value = static_cast<std::uint32_t>(child_fd_);
  EXPECT_EQ(map->update_elem(&key, &value, BPF_NOEXIST), -EINVAL);
  EXPECT_EQ(map->update_elem(&key, &value, BPF_EXIST), -EINVAL);
  EXPECT_EQ(map->object_at(0), nullptr);
  EXPECT_EQ(map->lookup_elem(&key, &value), -524);
  EXPECT_EQ(map->delete_elem(&key), -ENOENT);
  ASSERT_EQ(store(*map, 0, child_fd_), 0);
  EXPECT_EQ(map->lookup_elem(&key, &value), -524);
  EXPECT_EQ(map->lookup(&key), nullptr);  // programs see no slot's cgroup
  EXPECT_EQ(map->delete_elem(&key), 0);
  EXPECT_EQ(map->object_at(0), nullptr);
  EXPECT_EQ(map->delete_elem(&key), -ENOENT);
  key = 2;
  EXPECT_EQ(map->delete_elem(&key), -E2BIG);
  for (int fd : {file, proc_dir, cgroup_file}) close(fd);
}

// What a thread in parent/child sees: the helpers through the runtime's table, as a program calls
// them, in a forked child that moved itself into the cgroup.
struct ChildAnswers {
  std::int64_t under[6];  // slots 0 (child), 1 (parent), 2 (sibling), 3 (empty), 4, 2^32 + 1
  std::uint64_t cgroup_id;
  std::uint64_t ancestors[6];  // levels 0..3, 2^32 (int 0), 2^32 - 1 (int -1)
};

TEST_F(CgroupTree, HelpersSeeTheThreadsCgroup) {
  auto map = make_cgroup_array(4);
  ASSERT_NE(map, nullptr);
  ASSERT_EQ(store(*map, 0, child_fd_), 0);
  ASSERT_EQ(store(*map, 1, parent_fd_), 0);
  ASSERT_EQ(store(*map, 2, sibling_fd_), 0);
  const std::vector<HelperFn> table = perf_event_helper_table();
  const auto map_arg = reinterpret_cast<std::uint64_t>(map.get());
  const ChildAnswers a = run_in(parent_ + "/child", [&] {
    CallContext call;
    ChildAnswers answers{};
    const std::uint64_t indexes[6] = {0, 1, 2, 3, 4, (1ull << 32) + 1};
    for (int i = 0; i < 6; ++i) {
      answers.under[i] = static_cast<std::int64_t>(
          table[BPF_FUNC_current_task_under_cgroup](map_arg, indexes[i], 0, 0, 0, call));
    }
    answers.cgroup_id = table[BPF_FUNC_get_current_cgroup_id](0, 0, 0, 0, 0, call);
    const std::uint64_t levels[6] = {0, 1, 2, 3, 1ull << 32, 0xffffffffull};
    for (int i = 0; i < 6; ++i) {
      answers.ancestors[i] =
          table[BPF_FUNC_get_current_ancestor_cgroup_id](levels[i], 0, 0, 0, 0, call);
    }
    return answers;
  });
  EXPECT_EQ(a.under[0], 1) << "its own cgroup";
  EXPECT_EQ(a.under[1], 1) << "its parent";
  EXPECT_EQ(a.under[2], 0) << "a sibling";
  EXPECT_EQ(a.under[3], -EAGAIN) << "an empty slot";
  EXPECT_EQ(a.under[4], -E2BIG) << "past max_entries";
  EXPECT_EQ(a.under[5], 1) << "the index is a u32: 2^32 + 1 is slot 1, the parent";
  EXPECT_EQ(a.cgroup_id, inode_of(child_fd_));
  EXPECT_EQ(a.ancestors[0], inode_of(root_)) << "level 0 is the root";
  EXPECT_EQ(a.ancestors[1], inode_of(parent_fd_));
  EXPECT_EQ(a.ancestors[2], inode_of(child_fd_));
  EXPECT_EQ(a.ancestors[3], 0u) << "deeper than the thread's cgroup";
  EXPECT_EQ(a.ancestors[4], inode_of(root_)) << "the level is an int: 2^32 is level 0";
  EXPECT_EQ(a.ancestors[5], 0u) << "the level is an int: 2^32 - 1 is -1";
}

// A cgroup whose name starts with ".." is an ordinary cgroup; only a ".." component (a path outside
// the thread's cgroup namespace) is refused.
TEST_F(CgroupTree, ANameStartingWithDotsIsACgroup) {
  const std::string dots = parent_ + "/..dots";
  ASSERT_EQ(mkdirat(root_, dots.c_str(), 0755), 0) << std::strerror(errno);
  const int dots_fd = open_dir(dots);
  ASSERT_GE(dots_fd, 0);
  const std::uint64_t id = run_in(dots, [] { return current_cgroup_id(); });
  EXPECT_EQ(id, inode_of(dots_fd));
  close(dots_fd);
  remove_cgroup(dots);
}

// This process is in none of the test's cgroups: its answers differ from the moved child's.
TEST_F(CgroupTree, AThreadOutsideIsNotUnder) {
  auto map = make_cgroup_array(2);
  ASSERT_NE(map, nullptr);
  ASSERT_EQ(store(*map, 0, child_fd_), 0);
  ASSERT_EQ(store(*map, 1, parent_fd_), 0);
  const std::vector<HelperFn> table = perf_event_helper_table();
  CallContext call;
  const auto map_arg = reinterpret_cast<std::uint64_t>(map.get());
  EXPECT_EQ(table[BPF_FUNC_current_task_under_cgroup](map_arg, 0, 0, 0, 0, call), 0u);
  EXPECT_EQ(table[BPF_FUNC_current_task_under_cgroup](map_arg, 1, 0, 0, 0, call), 0u);
  const std::uint64_t mine = table[BPF_FUNC_get_current_cgroup_id](0, 0, 0, 0, 0, call);
  EXPECT_NE(mine, 0u);
  EXPECT_NE(mine, inode_of(child_fd_));
  EXPECT_EQ(current_ancestor_cgroup_id(0), inode_of(root_));
}

}  // namespace
}  // namespace userperf::bpf
