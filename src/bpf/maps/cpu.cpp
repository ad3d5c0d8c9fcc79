// possible_cpus() and current_cpu(): the per-CPU slot count and the slot a program run uses.
#include <fcntl.h>
#include <sched.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "bpf/maps/map.hpp"

namespace userperf::bpf {
namespace {

constexpr const char* kPossibleCpusFile = "/sys/devices/system/cpu/possible";

// Counts the CPUs of a cpulist such as "0-3,6,8-9\n" as libbpf's parse_cpu_mask_str does:
// 0 when the text is malformed.
std::uint32_t count_cpulist(const char* text, std::size_t size) {
  std::uint32_t count = 0;
  std::size_t i = 0;
  auto parse_number = [&](std::uint32_t& out) {
    if (i >= size || text[i] < '0' || text[i] > '9') return false;
    std::uint64_t value = 0;
    while (i < size && text[i] >= '0' && text[i] <= '9') {
      value = value * 10 + static_cast<std::uint64_t>(text[i] - '0');
      if (value > 0xffffffffu) return false;
      ++i;
    }
    out = static_cast<std::uint32_t>(value);
    return true;
  };
  while (i < size && text[i] != '\n' && text[i] != '\0') {
    std::uint32_t first = 0;
    if (!parse_number(first)) return 0;
    std::uint32_t last = first;
    if (i < size && text[i] == '-') {
      ++i;
      if (!parse_number(last) || last < first) return 0;
    }
    count += last - first + 1;
    if (i < size && text[i] == ',') ++i;
  }
  return count;
}

std::uint32_t read_possible_cpus() {
  int fd = ::open(kPossibleCpusFile, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char text[4096];
    ssize_t n = ::read(fd, text, sizeof(text));
    ::close(fd);
    if (n > 0) {
      std::uint32_t count = count_cpulist(text, static_cast<std::size_t>(n));
      if (count > 0) return count;
    }
  }
  int configured = get_nprocs_conf();
  return configured > 0 ? static_cast<std::uint32_t>(configured) : 1;
}

// Filled by the first possible_cpus() call (Map::create makes one before any program runs), so
// the signal-safe current_cpu() only reads it.
std::atomic<std::uint32_t> cached_possible_cpus{0};

}  // namespace

std::uint32_t possible_cpus() {
  std::uint32_t count = cached_possible_cpus.load(std::memory_order_acquire);
  if (count == 0) {
    count = read_possible_cpus();
    cached_possible_cpus.store(count, std::memory_order_release);
  }
  return count;
}

std::uint32_t current_cpu() {
  // glibc answers from rseq or the vDSO: no system call on the signal path.
  int cpu = sched_getcpu();
  if (cpu < 0) return 0;
  std::uint32_t count = cached_possible_cpus.load(std::memory_order_acquire);
  auto id = static_cast<std::uint32_t>(cpu);
  // Sparse possible masks ("0,2") would leave holes; fold ids into the slot range.
  return count != 0 && id >= count ? id % count : id;
}

}  // namespace userperf::bpf
