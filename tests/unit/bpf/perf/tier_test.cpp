// Which tier runs a loaded program: the x86-64 JIT by default (unchecked code of the verified
// program, constants blinded), the interpreter with USERPERF_BPF_JIT=0 (this executable runs a
// second time so, as ctest's unit_bpf_perf_interpreter) or ProgramTier{.jit = false} (what
// `userperf record --no-bpf-jit` asks for). Both tiers filter the same samples the same way.
#include <gtest/gtest.h>

#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "api/engine_instance.hpp"
#include "bpf/jit/jit.hpp"
#include "bpf/loader/elf_loader.hpp"
#include "bpf/perf/bpf_registry.hpp"
#include "support/test_events.hpp"
#include "userperf/userperf.h"

namespace userperf::testing {
namespace {

std::string object_path(const char* name) {
  return std::string(USERPERF_BPF_OBJECT_DIR) + "/progs/" + name + ".bpf.o";
}

struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) userperf_close(fd);
  }
};

int load(const char* object, bpf::ProgramTier tier) {
  auto image = bpf::load_elf_file(object_path(object));
  EXPECT_TRUE(image) << image.error().message;
  if (!image) return -1;
  std::string log;
  const int fd = api::bpf_registry().load_program(std::move(*image), "", &log, tier);
  EXPECT_GE(fd, 0) << log;
  return fd;
}

bool jitted(int prog_fd) {
  return api::bpf_registry().program(prog_fd)->program().jitted();
}

// The addresses of the samples handler_filter keeps out of five.
std::vector<std::uint64_t> kept_addresses(int prog_fd) {
  perf_event_attr attr = test_attr(PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD);
  Fd event(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  EXPECT_GE(event.fd, 0);
  MappedRing ring(event.fd, 1);
  EXPECT_TRUE(ring.ok());
  EXPECT_EQ(userperf_ioctl(event.fd, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog_fd)),
            0);
  EXPECT_EQ(userperf_ioctl(event.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  for (std::uint64_t addr : {0x10ull, 0x2000ull, 0xfffull, 0x1000ull, 0x3333ull}) {
    core::SampleData data;
    data.addr = addr;
    data.ip = 0x401000;
    fire(event.fd, 1, data);
  }
  std::vector<std::uint64_t> kept;
  for (const auto& rec : ring.drain()) kept.push_back(field_at<std::uint64_t>(rec, 8 + 8));
  return kept;
}

TEST(ProgramTier, TheJitByDefaultOnX86UnlessTheEnvironmentSaysNo) {
  const Fd prog(load("handler_filter", {}));
  ASSERT_GE(prog.fd, 0);
  EXPECT_EQ(jitted(prog.fd), bpf::jit_supported() && bpf::jit_allowed_by_environment());
#if defined(__x86_64__)
  const char* env = std::getenv("USERPERF_BPF_JIT");
  if (env == nullptr) {
    EXPECT_TRUE(jitted(prog.fd)) << "the default tier on x86-64 is the JIT";
  }
#endif
}

TEST(ProgramTier, ProgramsThatTailCallRunOnTheJitToo) {
  // tail_call_walk's programs call bpf_tail_call; the JIT translates it (docs/bpf.md, tail calls).
  const Fd prog(load("tail_call_walk", {}));
  ASSERT_GE(prog.fd, 0);
  EXPECT_EQ(jitted(prog.fd), bpf::jit_supported() && bpf::jit_allowed_by_environment());
}

TEST(ProgramTier, TheInterpreterWhenAskedAndTheSameSamples) {
  const Fd interpreted(load("handler_filter", {.jit = false}));
  ASSERT_GE(interpreted.fd, 0);
  EXPECT_FALSE(jitted(interpreted.fd));
  const Fd by_default(load("handler_filter", {}));
  ASSERT_GE(by_default.fd, 0);
  const std::vector<std::uint64_t> want = {0x2000, 0x1000, 0x3333};
  EXPECT_EQ(kept_addresses(interpreted.fd), want);
  EXPECT_EQ(kept_addresses(by_default.fd), want);
}

// Global functions are verified on their own, but run as ordinary calls: the same samples on both
// tiers (a ctx argument, a result written to the caller's stack, a scalar argument).
TEST(ProgramTier, GlobalFunctionsRunAsCallsOnBothTiers) {
  const Fd interpreted(load("global_filter", {.jit = false}));
  ASSERT_GE(interpreted.fd, 0);
  const Fd by_default(load("global_filter", {}));
  ASSERT_GE(by_default.fd, 0);
  const std::vector<std::uint64_t> want = {0x2000, 0x1000, 0x3333};
  EXPECT_EQ(kept_addresses(interpreted.fd), want);
  EXPECT_EQ(kept_addresses(by_default.fd), want);
}

// Probe loads (bpf_get_current_task_btf's task) run on the JIT, through the interpreter's
// probe_load; so does bpf_find_vma.
struct TaskBtfSeen {
  std::int64_t pid;
  std::int32_t tgid;
  std::uint32_t flags;
  std::int32_t leader_pid;
  std::int32_t pad;
  char comm[16];
};

TaskBtfSeen run_task_btf(int prog_fd) {
  const int map = userperf_bpf_map_fd(prog_fd, "seen");
  EXPECT_GE(map, 0);
  TaskBtfSeen initial{};
  initial.flags = 0xdeadbeef;  // the unmodelled member's probe load must write 0
  const std::uint32_t zero = 0;
  EXPECT_EQ(userperf_bpf_map_update_elem(map, &zero, &initial, BPF_ANY), 0);
  perf_event_attr attr = test_attr(PERF_SAMPLE_IP);
  Fd event(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  EXPECT_GE(event.fd, 0);
  MappedRing ring(event.fd, 1);
  EXPECT_EQ(userperf_ioctl(event.fd, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog_fd)),
            0);
  EXPECT_EQ(userperf_ioctl(event.fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  core::SampleData data;
  data.ip = 0x401000;
  fire(event.fd, 1, data);
  TaskBtfSeen s{};
  EXPECT_EQ(userperf_bpf_map_lookup_elem(map, &zero, &s), 0);
  userperf_close(map);
  return s;
}

TEST(ProgramTier, ProbeLoadsThroughTheBtfTaskRunOnBothTiers) {
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) GTEST_SKIP() << "no kernel BTF";
  char comm[16] = {};
  prctl(PR_GET_NAME, comm);
  for (const bool jit : {false, true}) {
    const Fd prog(load("task_btf", {.jit = jit}));
    ASSERT_GE(prog.fd, 0);
    EXPECT_EQ(jitted(prog.fd), jit && bpf::jit_supported() && bpf::jit_allowed_by_environment());
    const TaskBtfSeen s = run_task_btf(prog.fd);
    EXPECT_EQ(s.pid, syscall(SYS_gettid)) << "jit " << jit;
    EXPECT_EQ(s.tgid, getpid()) << "jit " << jit;
    EXPECT_EQ(s.leader_pid, getpid()) << "jit " << jit;
    EXPECT_EQ(s.flags, 0u) << "jit " << jit;
    EXPECT_STREQ(s.comm, comm) << "jit " << jit;
  }
  // bpf_find_vma's callback runs on the JIT too (its driver's steps around a local call).
  const Fd find_vma(load("find_vma", {}));
  ASSERT_GE(find_vma.fd, 0);
  EXPECT_EQ(jitted(find_vma.fd), bpf::jit_supported() && bpf::jit_allowed_by_environment());
}

}  // namespace
}  // namespace userperf::testing
