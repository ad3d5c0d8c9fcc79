#include "conformance/kernel_support.hpp"

#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>

#include "userperf/userperf.h"

namespace userperf::conformance {

namespace {

int result(long rc) {
  return rc < 0 ? -errno : static_cast<int>(rc);
}

std::string paranoid_level() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  std::string level;
  return in >> level ? level : "unknown";
}

std::string probe_kernel() {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = kMillisecond;
  attr.disabled = 1;
  const long fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd >= 0) {
    ::close(static_cast<int>(fd));
    return {};
  }
  const int err = errno;
  std::ostringstream why;
  why << "perf_event_open(cpu-clock, pid=0, cpu=-1) failed with " << strerrorname_np(err) << " ("
      << strerror(err) << "), perf_event_paranoid=" << paranoid_level();
  if (err == EACCES || err == EPERM) why << ": not permitted for this user";
  if (err == ENOSYS) why << ": the kernel has no perf events";
  return why.str();
}

volatile std::uint64_t g_sink;

}  // namespace

const char* target_name(Target target) {
  return target == Target::kKernel ? "Kernel" : "Userperf";
}

const std::string& kernel_unavailable_reason() {
  static const std::string reason = probe_kernel();
  return reason;
}

// ---- Perf ------------------------------------------------------------------------------------

int Perf::open(perf_event_attr attr, pid_t pid, int cpu, int group_fd, unsigned long flags) const {
  if (is_kernel()) return result(syscall(__NR_perf_event_open, &attr, pid, cpu, group_fd, flags));
  return result(userperf_perf_event_open(&attr, pid, cpu, group_fd, flags));
}

int Perf::ioctl(int fd, unsigned long request, unsigned long arg) const {
  if (is_kernel()) return result(::ioctl(fd, request, arg));
  return result(userperf_ioctl(fd, request, arg));
}

void* Perf::mmap(std::size_t length, int prot, int flags, int fd, off_t offset, int* err) const {
  void* p = is_kernel() ? ::mmap(nullptr, length, prot, flags, fd, offset)
                        : userperf_mmap(nullptr, length, prot, flags, fd, offset);
  *err = p == MAP_FAILED ? errno : 0;
  return p == MAP_FAILED ? nullptr : p;
}

int Perf::munmap(void* addr, std::size_t length) const {
  return result(is_kernel() ? ::munmap(addr, length) : userperf_munmap(addr, length));
}

ssize_t Perf::read(int fd, void* buf, std::size_t count) const {
  const ssize_t n = is_kernel() ? ::read(fd, buf, count) : userperf_read(fd, buf, count);
  return n < 0 ? -errno : n;
}

int Perf::close(int fd) const {
  return result(is_kernel() ? ::close(fd) : userperf_close(fd));
}

int Perf::poll(pollfd* fds, nfds_t nfds, int timeout_ms) const {
  return result(is_kernel() ? ::poll(fds, nfds, timeout_ms) : userperf_poll(fds, nfds, timeout_ms));
}

std::uint64_t Perf::id(int fd) const {
  std::uint64_t id = 0;
  if (ioctl(fd, PERF_EVENT_IOC_ID, reinterpret_cast<unsigned long>(&id)) != 0) return 0;
  return id;
}

std::vector<std::uint64_t> Perf::read_words(int fd, std::size_t max_words) const {
  std::vector<std::uint64_t> words(max_words);
  const ssize_t n = read(fd, words.data(), words.size() * sizeof(std::uint64_t));
  if (n < 0) return {};
  words.resize(static_cast<std::size_t>(n) / sizeof(std::uint64_t));
  return words;
}

int Perf::poll_now(int fd) const {
  pollfd p{fd, POLLIN, 0};
  const int n = poll(&p, 1, 0);
  return n < 0 ? n : p.revents;
}

// ---- Event -----------------------------------------------------------------------------------

Event::Event(const Perf& perf, const perf_event_attr& attr, pid_t pid, int cpu, int group_fd,
             unsigned long flags)
    : perf_(perf), fd_(perf.open(attr, pid, cpu, group_fd, flags)) {}

Event::~Event() {
  if (fd_ >= 0) perf_.close(fd_);
}

// ---- Ring ------------------------------------------------------------------------------------

Ring::Ring(const Perf& perf, int fd, std::size_t data_pages, int prot, int flags)
    : perf_(perf), length_((1 + data_pages) * kPage) {
  base_ = perf.mmap(length_, prot, flags, fd, 0, &error_);
  if (base_ != nullptr && ring::make_ring_view(base_, length_, view_) != ring::ReadStatus::kOk) {
    ADD_FAILURE() << target_name(perf.target()) << ": bad control page after mmap";
  }
}

Ring::~Ring() {
  if (base_ != nullptr) perf_.munmap(base_, length_);
}

std::uint64_t Ring::head() const {
  return __atomic_load_n(&control()->data_head, __ATOMIC_ACQUIRE);
}

std::uint64_t Ring::tail() const {
  return __atomic_load_n(&control()->data_tail, __ATOMIC_ACQUIRE);
}

void Ring::set_tail(std::uint64_t tail) {
  __atomic_store_n(&control()->data_tail, tail, __ATOMIC_RELEASE);
}

std::vector<Rec> Ring::drain() {
  return read_records(true);
}

std::vector<Rec> Ring::peek() {
  return read_records(false);
}

std::vector<Rec> Ring::read_records(bool consume) {
  std::vector<Rec> out;
  if (!ok()) return out;
  ring::Reader reader(view_);
  const ring::ReadStatus status = ring::read_pass(reader, [&](const ring::Record& r) {
    out.push_back(Rec{{r.bytes.begin(), r.bytes.end()}});
    return true;
  });
  EXPECT_EQ(status, ring::ReadStatus::kEmpty)
      << target_name(perf_.target()) << ": " << ring::to_string(status);
  if (consume) reader.commit();
  return out;
}

// ---- Workload and helpers --------------------------------------------------------------------

bool burn_until(const std::function<bool()>& done, int max_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(max_ms);
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return done();
    for (int i = 0; i < 4000; ++i) g_sink = g_sink + static_cast<std::uint64_t>(i) * 7;
  }
}

void burn_ms(int ms) {
  burn_until([] { return false; }, ms);
}

perf_event_attr clock_attr(std::uint64_t sample_type, std::uint64_t period, std::uint64_t config) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = config;
  attr.sample_period = period;
  attr.sample_type = sample_type;
  attr.disabled = 1;
  return attr;
}

std::vector<Rec> of_type(const std::vector<Rec>& records, std::uint32_t type) {
  std::vector<Rec> out;
  for (const Rec& r : records) {
    if (r.type() == type) out.push_back(r);
  }
  return out;
}

bool parse(const Rec& rec, const perf_event_attr& attr, abi::ParsedSample& out) {
  const abi::ParseStatus st = abi::parse_sample(rec.bytes, abi::SampleFormat::from_attr(attr), out);
  EXPECT_TRUE(st.ok()) << "sample of " << rec.bytes.size() << " bytes: " << abi::to_string(st.error)
                       << " at offset " << st.offset << "; fields " << describe(out.fields);
  return st.ok();
}

std::string describe(const std::vector<abi::SampleField>& fields) {
  std::ostringstream s;
  for (const abi::SampleField& f : fields) {
    s << f.name;
    if (f.index != 0) s << '[' << f.index << ']';
    s << '@' << f.offset << '+' << f.size << ' ';
  }
  return s.str();
}

pid_t this_tid() {
  return static_cast<pid_t>(syscall(SYS_gettid));
}

void TargetTest::SetUp() {
  if (GetParam() == Target::kKernel && !kernel_available()) {
    GTEST_SKIP() << "kernel half skipped: " << kernel_unavailable_reason();
  }
}

std::string target_param_name(const ::testing::TestParamInfo<Target>& info) {
  return target_name(info.param);
}

}  // namespace userperf::conformance
