// bcc cpufreq's cgroup filter end to end: tests/data/bpf/progs/cgroup_filter.bpf.c, loaded through
// the C API, its CGROUP_ARRAY filled with userperf_bpf_map_update_elem, runs on real task-clock
// overflows of a thread of this process, first outside the stored cgroup, then with the process
// moved into it (and back). Root and cgroup2 needed (tests/support/cgroup_tree.hpp skips
// otherwise).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "support/cgroup_tree.hpp"
#include "support/current_task_seen.hpp"
#include "support/own_task_clock.hpp"
#include "userperf/userperf.h"

namespace userperf::testing {
namespace {

struct Seen {  // cgroup_filter.bpf.c's struct seen
  std::uint64_t runs;
  std::uint64_t under;
  std::int64_t last_under;
  std::int64_t past_end;
  std::uint64_t cgroup_id;
  std::uint64_t ancestor1;
};

// The process's cgroup v2 path ("0::/path" of /proc/self/cgroup), without the leading '/'.
std::string own_cgroup() {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("0::/", 0) == 0) return line.substr(4);
  }
  return "";
}

bool move_process(int root, const std::string& cgroup) {
  const std::string procs = (cgroup.empty() ? "" : cgroup + "/") + "cgroup.procs";
  const int fd = openat(root, procs.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const std::string me = std::to_string(getpid());
  const bool ok = write(fd, me.data(), me.size()) == static_cast<ssize_t>(me.size());
  close(fd);
  return ok;
}

// Samples a new thread's task clock with `prog` attached and returns what the program saw.
Seen sample_a_thread(int prog, int seen_fd) {
  const std::uint32_t zero = 0;
  Seen initial{};
  EXPECT_EQ(userperf_bpf_map_update_elem(seen_fd, &zero, &initial, BPF_ANY), 0);
  std::thread worker([&] { run_on_own_task_clock(prog, 30'000'000); });
  worker.join();
  Seen s{};
  EXPECT_EQ(userperf_bpf_map_lookup_elem(seen_fd, &zero, &s), 0) << strerror(errno);
  return s;
}

class CgroupEndToEnd : public CgroupTree {};

TEST_F(CgroupEndToEnd, CpufreqFilterSeesTheSampledThreadsCgroup) {
  const std::string path = std::string(USERPERF_BPF_OBJECT_DIR) + "/progs/cgroup_filter.bpf.o";
  char log[16384] = {};
  const int prog = userperf_bpf_prog_load(path.c_str(), "filter", log, sizeof log);
  ASSERT_GE(prog, 0) << strerror(errno) << "\n" << log;
  const int cgroups = userperf_bpf_map_fd(prog, "cgroup_map");
  const int seen = userperf_bpf_map_fd(prog, "seen");
  ASSERT_GE(cgroups, 0);
  ASSERT_GE(seen, 0);
  const std::uint32_t zero = 0;
  // The C API's answers are the kernel's: a file is no cgroup (EBADF), lookups are ENOTSUPP.
  const int file = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  auto value = static_cast<std::uint32_t>(file);
  EXPECT_EQ(userperf_bpf_map_update_elem(cgroups, &zero, &value, BPF_ANY), -1);
  EXPECT_EQ(errno, EBADF);
  close(file);
  value = static_cast<std::uint32_t>(child_fd_);
  ASSERT_EQ(userperf_bpf_map_update_elem(cgroups, &zero, &value, BPF_ANY), 0) << strerror(errno);
  EXPECT_EQ(userperf_bpf_map_lookup_elem(cgroups, &zero, &value), -1);
  EXPECT_EQ(errno, 524);

  const std::string home = own_cgroup();
  const int home_fd = open_dir(home.empty() ? "." : home);
  ASSERT_GE(home_fd, 0);
  const Seen outside = sample_a_thread(prog, seen);
  ASSERT_TRUE(move_process(root_, parent_ + "/child")) << strerror(errno);
  const Seen inside = sample_a_thread(prog, seen);
  const bool back = move_process(root_, home);
  EXPECT_TRUE(back) << "cannot move the test back to /" << home << ": " << strerror(errno);

  ASSERT_GT(outside.runs, 0u) << "no overflow ran the program";
  EXPECT_EQ(outside.under, 0u);
  EXPECT_EQ(outside.last_under, 0);
  EXPECT_EQ(outside.past_end, -E2BIG);
  EXPECT_EQ(outside.cgroup_id, inode_of(home_fd));
  ASSERT_GT(inside.runs, 0u) << "no overflow ran the program";
  EXPECT_EQ(inside.under, inside.runs);
  EXPECT_EQ(inside.last_under, 1);
  EXPECT_EQ(inside.cgroup_id, inode_of(child_fd_));
  EXPECT_EQ(inside.ancestor1, inode_of(parent_fd_));
  close(home_fd);
  userperf_close(seen);
  userperf_close(cgroups);
  userperf_close(prog);
}

}  // namespace
}  // namespace userperf::testing
