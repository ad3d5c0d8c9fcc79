// Conformance harness: one scenario runs on the real kernel (perf_event_open(2) on the calling
// thread) and on userperf (the same attr through userperf_perf_event_open), and the tests assert
// the kernel's behaviour on both. Records of either are read with userperf's ring::Reader (same
// ABI) and decoded with abi::parse_sample.
//
// Target tests derive from TargetTest and are instantiated for both targets with
// CONFORMANCE_TARGETS(Suite). When the kernel refuses perf_event_open outright, the kernel half
// skips with the reason and the userperf half still runs.
#pragma once

#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/types.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "abi/sample_parser.hpp"
#include "ring/reader.hpp"

namespace userperf::conformance {

enum class Target { kKernel, kUserperf };
const char* target_name(Target target);
// gtest prints parameters with this.
inline void PrintTo(Target target, std::ostream* os) {
  *os << target_name(target);
}

// Empty when perf_event_open works here; otherwise why it does not (errno, perf_event_paranoid).
const std::string& kernel_unavailable_reason();
inline bool kernel_available() {
  return kernel_unavailable_reason().empty();
}

inline constexpr std::size_t kPage = 4096;
inline constexpr std::uint64_t kMillisecond = 1'000'000;

// The perf syscalls of one target. Every call returns what the syscall returns on success and
// -errno on failure, so errnos compare directly.
class Perf {
 public:
  explicit Perf(Target target) : target_(target) {}
  Target target() const { return target_; }
  bool is_kernel() const { return target_ == Target::kKernel; }

  int open(perf_event_attr attr, pid_t pid = 0, int cpu = -1, int group_fd = -1,
           unsigned long flags = 0) const;
  // `arg` is the full register value the kernel sees: pass 0xffffffffUL for an int -1 and ~0UL
  // for a long -1.
  int ioctl(int fd, unsigned long request, unsigned long arg = 0) const;
  // The address, or nullptr with *err = errno.
  void* mmap(std::size_t length, int prot, int flags, int fd, off_t offset, int* err) const;
  int munmap(void* addr, std::size_t length) const;
  ssize_t read(int fd, void* buf, std::size_t count) const;
  int close(int fd) const;
  int poll(pollfd* fds, nfds_t nfds, int timeout_ms) const;

  // PERF_EVENT_IOC_ID, 0 on failure.
  std::uint64_t id(int fd) const;
  // read() into 64-bit words; empty on failure.
  std::vector<std::uint64_t> read_words(int fd, std::size_t max_words = 64) const;
  // revents of a zero-timeout poll for POLLIN (negative: -errno).
  int poll_now(int fd) const;

 private:
  Target target_;
};

// An event descriptor of one target, closed on destruction.
class Event {
 public:
  Event(const Perf& perf, const perf_event_attr& attr, pid_t pid = 0, int cpu = -1,
        int group_fd = -1, unsigned long flags = 0);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  int error() const { return fd_ >= 0 ? 0 : -fd_; }  // errno of the open
  std::uint64_t id() const { return perf_.id(fd_); }
  int ioctl(unsigned long request, unsigned long arg = 0) const {
    return perf_.ioctl(fd_, request, arg);
  }
  int enable() const { return ioctl(PERF_EVENT_IOC_ENABLE); }
  int disable() const { return ioctl(PERF_EVENT_IOC_DISABLE); }

 private:
  const Perf& perf_;
  int fd_;
};

// A copied record.
struct Rec {
  std::vector<std::uint8_t> bytes;

  const perf_event_header& header() const {
    return *reinterpret_cast<const perf_event_header*>(bytes.data());
  }
  std::uint32_t type() const { return header().type; }
  template <class T>
  T at(std::size_t offset) const {
    T v{};
    std::memcpy(&v, bytes.data() + offset, sizeof v);
    return v;
  }
};

// A mapping of an event's buffer at offset 0 (1 + data_pages pages), unmapped on destruction.
class Ring {
 public:
  Ring(const Perf& perf, int fd, std::size_t data_pages, int prot = PROT_READ | PROT_WRITE,
       int flags = MAP_SHARED);
  ~Ring();
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  bool ok() const { return base_ != nullptr; }
  int error() const { return error_; }  // errno of the mmap
  std::size_t length() const { return length_; }
  perf_event_mmap_page* control() const { return static_cast<perf_event_mmap_page*>(base_); }
  const ring::RingView& view() const { return view_; }
  std::uint64_t data_size() const { return view_.data_size; }
  std::uint64_t head() const;  // load-acquire of data_head
  std::uint64_t tail() const;
  void set_tail(std::uint64_t tail);

  // Every record in [data_tail, data_head), consumed (data_tail advanced). Fails the current test
  // on a corrupt ring.
  std::vector<Rec> drain();
  // The same without consuming.
  std::vector<Rec> peek();

 private:
  std::vector<Rec> read_records(bool consume);

  const Perf& perf_;
  void* base_ = nullptr;
  std::size_t length_ = 0;
  int error_ = 0;
  ring::RingView view_;
};

// Burns CPU in user space on the calling thread until done() holds or max_ms of wall time passed;
// returns done()'s last value. done() is checked about every 20 us.
bool burn_until(const std::function<bool()>& done, int max_ms);
void burn_ms(int ms);

// A sampling cpu-clock (or task-clock) event on the calling thread, disabled.
perf_event_attr clock_attr(std::uint64_t sample_type, std::uint64_t period = kMillisecond,
                           std::uint64_t config = PERF_COUNT_SW_CPU_CLOCK);

// Records of `type` among `records`.
std::vector<Rec> of_type(const std::vector<Rec>& records, std::uint32_t type);

// Decodes a sample with the attr's layout; fails the current test (and returns false) if the
// fields do not consume exactly header.size.
bool parse(const Rec& rec, const perf_event_attr& attr, abi::ParsedSample& out);

// "name@offset+size" for every field, for messages and layout comparisons.
std::string describe(const std::vector<abi::SampleField>& fields);

pid_t this_tid();

// Tests that run once per target.
class TargetTest : public ::testing::TestWithParam<Target> {
 protected:
  void SetUp() override;
  Target target() const { return GetParam(); }
  const Perf& perf() const { return perf_; }
  bool is_kernel() const { return GetParam() == Target::kKernel; }

 private:
  Perf perf_{GetParam()};
};

std::string target_param_name(const ::testing::TestParamInfo<Target>& info);

#define CONFORMANCE_TARGETS(suite)                                                        \
  INSTANTIATE_TEST_SUITE_P(, suite,                                                       \
                           ::testing::Values(::userperf::conformance::Target::kKernel,    \
                                             ::userperf::conformance::Target::kUserperf), \
                           ::userperf::conformance::target_param_name)

// Skips the current test unless the kernel can run it (for kernel-vs-userperf comparisons).
#define CONFORMANCE_REQUIRE_KERNEL()                                        \
  do {                                                                      \
    if (!::userperf::conformance::kernel_available())                       \
      GTEST_SKIP() << "kernel perf_event_open unavailable: "                \
                   << ::userperf::conformance::kernel_unavailable_reason(); \
  } while (0)

// Runs `make` once per (target, key) for the whole run, so comparison tests reuse what the
// per-target tests observed instead of sampling again.
template <class T>
const T& observe_once(Target target, const std::string& key, const std::function<T()>& make) {
  static std::map<std::pair<Target, std::string>, T> cache;
  const auto k = std::make_pair(target, key);
  auto it = cache.find(k);
  if (it == cache.end()) it = cache.emplace(k, make()).first;
  return it->second;
}

}  // namespace userperf::conformance
