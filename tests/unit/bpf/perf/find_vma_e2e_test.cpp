// bpf_get_current_task_btf and bpf_find_vma end to end: tests/data/bpf/progs/find_vma.bpf.c
// (clang-compiled, CO-RE-relocated against the running kernel's BTF) runs on task-clock
// overflows of a second thread; what it read through the task's and the vma's BTF pointers is
// compared with gettid, getpid, PR_GET_NAME and the mappings of /proc/self/maps.
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>

#include "bpf/perf/find_vma.hpp"
#include "support/current_task_seen.hpp"
#include "support/own_task_clock.hpp"
#include "userperf/userperf.h"

namespace userperf::testing {
namespace {

struct Lookup {
  std::uint64_t code;
  std::uint64_t anon;
};

// find_vma.bpf.c's struct seen.
struct Seen {
  std::uint64_t runs;
  std::int32_t pid;
  std::int32_t tgid;
  char comm[16];
  std::int64_t code_ret;
  std::int64_t zero_ret;
  std::int64_t flags_ret;
  std::int64_t anon_ret;
  std::int32_t cb_pid;
  std::int32_t pad;
  std::uint64_t vm_start;
  std::uint64_t vm_end;
  std::uint64_t vm_flags;
  std::uint64_t file;
  char iname[40];
  char name[64];
  std::uint64_t anon_flags;
  std::uint64_t anon_file;
  std::uint64_t anon_dentry;
};

constexpr std::uint64_t kVmRead = 0x1;
constexpr std::uint64_t kVmWrite = 0x2;
constexpr std::uint64_t kVmExec = 0x4;

std::string executable_basename() {
  char path[PATH_MAX] = {};
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return {};
  const std::string full(path, static_cast<std::size_t>(n));
  return full.substr(full.rfind('/') + 1);
}

TEST(FindVma, MappingLookupReadsProcSelfMaps) {
  bpf::FoundVma vma;
  const auto code = reinterpret_cast<std::uintptr_t>(&executable_basename);
  ASSERT_TRUE(bpf::find_mapping(code, vma));
  EXPECT_LE(vma.start, code);
  EXPECT_GT(vma.end, code);
  EXPECT_TRUE(vma.flags & kVmExec);
  EXPECT_TRUE(vma.has_file);
  EXPECT_EQ(std::string(vma.name), executable_basename());
  EXPECT_FALSE(bpf::find_mapping(0, vma));
  void* anon = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(anon, MAP_FAILED);
  ASSERT_TRUE(bpf::find_mapping(reinterpret_cast<std::uintptr_t>(anon), vma));
  EXPECT_FALSE(vma.has_file);
  EXPECT_EQ(vma.flags & (kVmRead | kVmWrite | kVmExec), kVmRead | kVmWrite);
  munmap(anon, 4096);
}

TEST(FindVma, BtfTaskAndVmaReadsGiveTheThreadAndItsMappings) {
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
    GTEST_SKIP() << "the kernel has no BTF (/sys/kernel/btf/vmlinux)";
  }
  const std::string path = std::string(USERPERF_BPF_OBJECT_DIR) + "/progs/find_vma.bpf.o";
  char log[16384] = {};
  const int prog = userperf_bpf_prog_load(path.c_str(), "find_vma_of_task", log, sizeof log);
  ASSERT_GE(prog, 0) << strerror(errno) << "\n" << log;
  const int lookup = userperf_bpf_map_fd(prog, "lookup");
  const int seen = userperf_bpf_map_fd(prog, "seen");
  ASSERT_GE(lookup, 0);
  ASSERT_GE(seen, 0);
  void* anon = mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(anon, MAP_FAILED);
  const std::uint32_t zero = 0;
  const Lookup in{reinterpret_cast<std::uintptr_t>(&executable_basename),
                  reinterpret_cast<std::uintptr_t>(anon) + 100};
  ASSERT_EQ(userperf_bpf_map_update_elem(lookup, &zero, &in, BPF_ANY), 0);
  Seen initial{};
  initial.anon_dentry = ~0ull;  // the NULL walk must write 0
  ASSERT_EQ(userperf_bpf_map_update_elem(seen, &zero, &initial, BPF_ANY), 0);

  pid_t tid = 0;
  char comm[16] = {};
  std::thread worker([&] {
    prctl(PR_SET_NAME, "findvma-e2e");
    prctl(PR_GET_NAME, comm);
    tid = static_cast<pid_t>(syscall(SYS_gettid));
    run_on_own_task_clock(prog, 30'000'000);
  });
  worker.join();

  Seen s{};
  ASSERT_EQ(userperf_bpf_map_lookup_elem(seen, &zero, &s), 0) << strerror(errno);
  ASSERT_GT(s.runs, 0u) << "no overflow ran the program";
  EXPECT_EQ(s.pid, tid);
  EXPECT_EQ(s.tgid, getpid());
  EXPECT_STREQ(s.comm, comm);
  EXPECT_EQ(s.code_ret, 0);
  EXPECT_EQ(s.zero_ret, -ENOENT);
  EXPECT_EQ(s.flags_ret, -EINVAL);
  EXPECT_EQ(s.anon_ret, 0);
  EXPECT_EQ(s.cb_pid, tid);
  EXPECT_LE(s.vm_start, in.code);
  EXPECT_GT(s.vm_end, in.code);
  EXPECT_TRUE(s.vm_flags & kVmExec);
  EXPECT_NE(s.file, 0u);
  const std::string exe = executable_basename();
  EXPECT_EQ(std::string(s.iname), exe.substr(0, 39));  // DNAME_INLINE_LEN 40 on 6.14+
  EXPECT_EQ(std::string(s.name), exe);
  EXPECT_EQ(s.anon_flags & (kVmRead | kVmWrite | kVmExec), kVmRead | kVmWrite);
  EXPECT_EQ(s.anon_file, 0u);
  EXPECT_EQ(s.anon_dentry, 0u);
  munmap(anon, 8192);
  userperf_close(seen);
  userperf_close(lookup);
  userperf_close(prog);
}

}  // namespace
}  // namespace userperf::testing
