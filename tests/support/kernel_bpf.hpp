// Thin bpf(2) wrappers for tests that use the running kernel as an oracle: create maps, load a
// program and get the verifier's log, and load a loader-produced ObjectImage's program the way
// libbpf would (maps created, global data written, .rodata frozen, map references as fds).
// Every call returns -errno on failure; tests GTEST_SKIP() when the kernel refuses bpf() itself
// (kernel_refuses_bpf()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bpf/isa/insn.hpp"
#include "bpf/isa/program_image.hpp"

namespace userperf::testing::kernel_bpf {

// An owned descriptor, closed on destruction.
class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.release()) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept;
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd();
  int get() const { return fd_; }
  int release();

 private:
  int fd_ = -1;
};

// The fd of a new map, or -errno. A PERF_EVENT_ARRAY's max_entries 0 becomes the number of
// possible CPUs (as libbpf does); the name is cut to the kernel's 15 characters.
int map_create(const bpf::MapSpec& spec);
int map_update(int map_fd, const void* key, const void* value, std::uint64_t flags = BPF_ANY);
int map_freeze(int map_fd);

struct ProgLoadResult {
  int fd = -1;      // the program, owned by the caller when >= 0
  int error = 0;    // errno when fd < 0
  std::string log;  // the verifier's log (level 1) when the load failed; with `stats`, always
};
// `stats`: one load with log_level BPF_LOG_STATS, whose log (kept on success too) ends with the
// kernel's "stack depth N+M..." line.
ProgLoadResult prog_load(std::uint32_t prog_type, std::span<const bpf::Insn> insns,
                         const std::string& license, std::uint32_t kern_version = 0,
                         bool stats = false);

// True for the errnos that mean "bpf() is not available to this process" (EPERM, ENOSYS).
bool kernel_refuses_bpf(int error);

struct LoadedProgram {
  std::vector<ScopedFd> maps;  // ObjectImage::maps order
  ScopedFd program;
  int error = 0;          // errno of the failing step, 0 on success
  std::string log;        // which step failed, and the verifier's log for a refused program
  std::string stats_log;  // `stats`: the verifier's statistics (prog_load's)
};

// Creates every map of `image` (global data: initial value written, BPF_F_RDONLY_PROG maps
// frozen), turns BPF_PSEUDO_MAP_IDX / _IDX_VALUE references into BPF_PSEUDO_MAP_FD / _VALUE with
// those fds, and loads programs[program_index] as `prog_type` with the image's license.
LoadedProgram load_image_program(const bpf::ObjectImage& image, std::size_t program_index,
                                 std::uint32_t prog_type, bool stats = false);

}  // namespace userperf::testing::kernel_bpf
