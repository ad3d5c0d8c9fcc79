// A test cgroup tree under the cgroup2 mount's root, parent/{child,sibling}, removed at the end
// (root needed: the fixture skips with the reason when the mount or mkdir is missing), and a way
// to run code in a forked child that moved itself into one of its cgroups.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>

#include "bpf/perf/current_cgroup.hpp"

namespace userperf::testing {

inline std::uint64_t inode_of(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_ino) : 0;
}

class CgroupTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = bpf::cgroup2_root_fd();
    if (root_ < 0) GTEST_SKIP() << "no cgroup2 mount in /proc/self/mountinfo";
    parent_ = "userperf-cgroup-test-" + std::to_string(getpid());
    if (mkdirat(root_, parent_.c_str(), 0755) != 0) {
      GTEST_SKIP() << "cannot create a cgroup under the cgroup2 mount: " << std::strerror(errno);
    }
    made_parent_ = true;
    ASSERT_EQ(mkdirat(root_, (parent_ + "/child").c_str(), 0755), 0) << std::strerror(errno);
    ASSERT_EQ(mkdirat(root_, (parent_ + "/sibling").c_str(), 0755), 0) << std::strerror(errno);
    parent_fd_ = open_dir(parent_);
    child_fd_ = open_dir(parent_ + "/child");
    sibling_fd_ = open_dir(parent_ + "/sibling");
    ASSERT_GE(parent_fd_, 0);
    ASSERT_GE(child_fd_, 0);
    ASSERT_GE(sibling_fd_, 0);
  }

  void TearDown() override {
    for (int fd : {parent_fd_, child_fd_, sibling_fd_}) {
      if (fd >= 0) close(fd);
    }
    if (!made_parent_) return;
    for (const std::string& dir : {parent_ + "/child", parent_ + "/sibling", parent_}) {
      remove_cgroup(dir);
    }
    EXPECT_NE(faccessat(root_, parent_.c_str(), F_OK, 0), 0) << "test cgroup left behind";
  }

  // A reaped child may leave its cgroup populated for a moment: rmdir is EBUSY until then.
  void remove_cgroup(const std::string& dir) const {
    for (int tries = 0;
         unlinkat(root_, dir.c_str(), AT_REMOVEDIR) != 0 && errno == EBUSY && tries < 100;
         ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  int open_dir(const std::string& path) const {
    return openat(root_, path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }

  // Runs `fn` (returning a trivially copyable T) in a forked child that first writes its pid to
  // `cgroup`'s cgroup.procs (a path under the mount), and gives back what it returned.
  template <class Fn>
  auto run_in(const std::string& cgroup, Fn fn) const -> decltype(fn()) {
    using T = decltype(fn());
    static_assert(std::is_trivially_copyable_v<T>);
    T result{};
    int pipe_fds[2];
    EXPECT_EQ(pipe(pipe_fds), 0);
    const pid_t pid = fork();
    if (pid == 0) {
      const int procs = openat(root_, (cgroup + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
      const std::string me = std::to_string(getpid());
      if (procs < 0 || write(procs, me.data(), me.size()) != static_cast<ssize_t>(me.size())) {
        _exit(2);
      }
      close(procs);
      const T answer = fn();
      _exit(write(pipe_fds[1], &answer, sizeof answer) == sizeof answer ? 0 : 3);
    }
    close(pipe_fds[1]);
    EXPECT_EQ(read(pipe_fds[0], &result, sizeof result), static_cast<ssize_t>(sizeof result));
    close(pipe_fds[0]);
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
    return result;
  }

  int root_ = -1;
  std::string parent_;
  bool made_parent_ = false;
  int parent_fd_ = -1, child_fd_ = -1, sibling_fd_ = -1;
};

}  // namespace userperf::testing
