// Open-time attribute rules; see attr_rules.hpp for the order in which the kernel applies them.
#include "abi/attr_rules.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>

#include "support/user_memory.hpp"

namespace userperf::abi {

namespace {

constexpr std::size_t kFlagWordOffset = 40;    // the bitfield after read_format
constexpr std::size_t kAuxActionOffset = 116;  // aux_action / 6.1's __reserved_3
constexpr std::size_t kSizeOffset = 4;         // perf_event_attr::size
constexpr std::uint32_t kOurAttrSize = sizeof(perf_event_attr);
static_assert(kOurAttrSize == PERF_ATTR_SIZE_VER7, "userperf's attr is the 128-byte VER7 layout");

// perf_allow_kernel(): kernel (and hypervisor) profiling needs privilege above paranoid level 1.
int perf_allow_kernel(const OpenLimits& limits) {
  if (limits.paranoid > 1 && !limits.privileged) return -EACCES;
  return 0;
}

// perfmon_capable().
bool perfmon_capable(const OpenLimits& limits) {
  return limits.privileged;
}

// check_zeroed_user() over [begin, end) when part of it is unreadable: the kernel reads it one
// aligned word at a time and stops at the first non-zero word, so a non-zero byte before the
// unreadable word is E2BIG, not EFAULT. An aligned word never straddles a page.
int scan_zeroed_words(const unsigned char* begin, const unsigned char* end) {
  constexpr std::uintptr_t kWord = sizeof(std::uint64_t);
  const auto first = reinterpret_cast<std::uintptr_t>(begin);
  const auto last = reinterpret_cast<std::uintptr_t>(end);
  for (std::uintptr_t word = first & ~(kWord - 1); word < last; word += kWord) {
    unsigned char bytes[kWord];
    if (!support::read_user(reinterpret_cast<const void*>(word), bytes, kWord)) return -EFAULT;
    for (std::uintptr_t i = 0; i < kWord; ++i) {
      if (word + i >= first && word + i < last && bytes[i] != 0) return -E2BIG;
    }
  }
  return 0;
}

// copy_struct_from_user(): copy what both sides know; a caller's tail beyond our struct must be
// zero (E2BIG otherwise), and our tail beyond the caller's struct is zero-filled. The caller's
// memory is read without trusting it: an unreadable byte is EFAULT, as the kernel's copy is.
int copy_struct(perf_event_attr& out, const unsigned char* src, std::uint32_t usize) {
  std::memset(&out, 0, sizeof(out));
  const std::uint32_t copied = std::min(usize, kOurAttrSize);
  // check_zeroed_user() first, as the kernel does: in chunks, no page-sized buffer; a chunk that
  // cannot be read whole is scanned word by word, as the kernel scans.
  for (std::uint32_t at = kOurAttrSize; at < usize;) {
    unsigned char chunk[256];
    const std::uint32_t n = std::min<std::uint32_t>(sizeof chunk, usize - at);
    if (!support::read_user(src + at, chunk, n)) {
      if (const int err = scan_zeroed_words(src + at, src + at + n); err != 0) return err;
      return -EFAULT;  // not reached: an unreadable chunk has an unreadable word
    }
    for (std::uint32_t i = 0; i < n; ++i) {
      if (chunk[i] != 0) return -E2BIG;
    }
    at += n;
  }
  if (!support::read_user(src, &out, copied)) return -EFAULT;
  return 0;
}

// perf_copy_attr() err_size: report our size back to the caller (put_user; a failure to write it
// changes nothing, as in the kernel).
int attr_size_error(perf_event_attr* uattr) {
  support::write_user(reinterpret_cast<unsigned char*>(uattr) + kSizeOffset, &kOurAttrSize,
                      sizeof(kOurAttrSize));
  return -E2BIG;
}

// perf_copy_attr(): the PERF_SAMPLE_BRANCH_STACK rules.
int check_branch_sample_type(perf_event_attr& attr, const OpenLimits& limits) {
  std::uint64_t mask = attr.branch_sample_type;
  // Only defined branch bits.
  if (mask & ~(kBranchSampleMax - 1)) return -EINVAL;
  // At least one branch-type bit besides the privilege levels.
  if (!(mask & ~kBranchPlmAll)) return -EINVAL;
  // No privilege level given: inherit it from the exclude_* bits.
  if (!(mask & kBranchPlmAll)) {
    if (!attr.exclude_kernel) mask |= PERF_SAMPLE_BRANCH_KERNEL;
    if (!attr.exclude_user) mask |= PERF_SAMPLE_BRANCH_USER;
    if (!attr.exclude_hv) mask |= PERF_SAMPLE_BRANCH_HV;
    attr.branch_sample_type = mask;
  }
  // Kernel/hypervisor branches need kernel-profiling permission.
  if (mask & (PERF_SAMPLE_BRANCH_KERNEL | PERF_SAMPLE_BRANCH_HV)) {
    if (int ret = perf_allow_kernel(limits)) return ret;
  }
  return 0;
}

// perf_copy_attr(): the PERF_SAMPLE_STACK_USER rules (x86-64 has the user stack dump).
int check_stack_user(const perf_event_attr& attr) {
  // The size is a u32 but a record is limited to a u16 size.
  if (attr.sample_stack_user >= USHRT_MAX) return -EINVAL;
  // Must be a whole number of u64.
  if (attr.sample_stack_user % sizeof(std::uint64_t) != 0) return -EINVAL;
  return 0;
}

// perf_copy_attr()'s checks after the copy, in its order.
int validate_copied_attr(perf_event_attr& attr, const OpenLimits& limits) {
  // Reserved fields: __reserved_1 (flag bits 38..63), __reserved_2, and aux_action's
  // __reserved_3 (bits 3..31).
  if ((attr_flag_word(attr) >> (kLastKnownAttrFlagBit + 1)) != 0 || attr.__reserved_2 != 0 ||
      (aux_action(attr) & kAuxActionReserved) != 0) {
    return -EINVAL;
  }
  // Unknown sample_type bits.
  if (attr.sample_type & ~(kSampleTypeMax - 1)) return -EINVAL;
  // Unknown read_format bits.
  if (attr.read_format & ~(kReadFormatMax - 1)) return -EINVAL;
  // Branch stack sampling.
  if (attr.sample_type & PERF_SAMPLE_BRANCH_STACK) {
    if (int ret = check_branch_sample_type(attr, limits)) return ret;
  }
  // User registers.
  if (attr.sample_type & PERF_SAMPLE_REGS_USER) {
    if (int ret = perf_reg_validate(attr.sample_regs_user)) return ret;
  }
  // User stack.
  if (attr.sample_type & PERF_SAMPLE_STACK_USER) {
    if (int ret = check_stack_user(attr)) return ret;
  }
  // sample_max_stack 0 means the sysctl's limit.
  if (attr.sample_max_stack == 0) attr.sample_max_stack = static_cast<__u16>(limits.max_stack);
  // Interrupt registers: the kernel keeps this result and returns it only if none of the checks
  // below fails first (they are all EINVAL too, so only the bookkeeping differs).
  int ret = 0;
  if (attr.sample_type & PERF_SAMPLE_REGS_INTR) ret = perf_reg_validate(attr.sample_regs_intr);
  // PERF_SAMPLE_CGROUP needs CONFIG_CGROUP_PERF, which userperf always "has".
  // WEIGHT and WEIGHT_STRUCT are exclusive.
  if ((attr.sample_type & PERF_SAMPLE_WEIGHT) && (attr.sample_type & PERF_SAMPLE_WEIGHT_STRUCT)) {
    return -EINVAL;
  }
  // inherit_thread refines inherit.
  if (!attr.inherit && attr.inherit_thread) return -EINVAL;
  // remove_on_exec and enable_on_exec are contradictory.
  if (attr.remove_on_exec && attr.enable_on_exec) return -EINVAL;
  // sigtrap events must not survive exec.
  if (attr.sigtrap && !attr.remove_on_exec) return -EINVAL;
  return ret;
}

// perf_try_init_event(): a PMU without PERF_PMU_CAP_EXTENDED_REGS (the software PMUs) refuses
// the XMM register bits, in either mask, whether or not REGS_USER/REGS_INTR is sampled.
bool has_extended_regs(const perf_event_attr& attr) {
  return (attr.sample_regs_user & kRegExtendedMask) || (attr.sample_regs_intr & kRegExtendedMask);
}

// has_branch_stack().
bool has_branch_stack(const perf_event_attr& attr) {
  return (attr.sample_type & PERF_SAMPLE_BRANCH_STACK) != 0;
}

// perf_swevent_init() and its hand-over to cpu_clock_event_init() / task_clock_event_init().
int perf_swevent_init(const perf_event_attr& attr) {
  // Only PERF_TYPE_SOFTWARE.
  if (attr.type != PERF_TYPE_SOFTWARE) return -ENOENT;
  // No branch sampling for software events (the clock PMUs repeat this check).
  if (has_branch_stack(attr)) return -EOPNOTSUPP;
  // CPU_CLOCK / TASK_CLOCK are re-typed to their hrtimer PMUs, whose init accepts them.
  if (attr.config == PERF_COUNT_SW_CPU_CLOCK || attr.config == PERF_COUNT_SW_TASK_CLOCK) return 0;
  // Unknown software event (config is compared as a u64).
  if (attr.config >= PERF_COUNT_SW_MAX) return -ENOENT;
  return 0;
}

// perf_try_init_event()'s generic checks after a software PMU's event_init succeeded.
int perf_try_init_event_generic(const perf_event_attr& attr) {
  // Extended (XMM) registers need PERF_PMU_CAP_EXTENDED_REGS.
  if (has_extended_regs(attr)) return -EOPNOTSUPP;
  // Software PMUs have neither PERF_PMU_CAP_NO_EXCLUDE nor a scope.
  return 0;
}

// Parses a cpulist such as "0-3,8" and returns the highest CPU + 1, or -1.
int parse_cpu_list_count(const char* text) {
  int highest = -1;
  const char* p = text;
  while (*p != '\0' && *p != '\n') {
    char* end = nullptr;
    long first = std::strtol(p, &end, 10);
    if (end == p) return -1;
    long last = first;
    p = end;
    if (*p == '-') {
      ++p;
      last = std::strtol(p, &end, 10);
      if (end == p) return -1;
      p = end;
    }
    highest = std::max(highest, static_cast<int>(std::max(first, last)));
    if (*p == ',') ++p;
  }
  return highest < 0 ? -1 : highest + 1;
}

long read_long_file(const char* path, long fallback) {
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return fallback;
  long value = fallback;
  if (std::fscanf(f, "%ld", &value) != 1) value = fallback;
  std::fclose(f);
  return value;
}

}  // namespace

// perf_event_alloc() right after perf_init_event(): the PMU-capability rules for AUX.
int check_pmu_aux_caps(const perf_event_attr& attr) {
  const std::uint32_t action = aux_action(attr);
  // aux_output needs PERF_PMU_CAP_AUX_OUTPUT (and excludes pause/resume).
  if (attr.aux_output) return -EOPNOTSUPP;
  // aux_pause and aux_resume are exclusive.
  if ((action & kAuxPause) && (action & kAuxResume)) return -EINVAL;
  // aux_start_paused needs PERF_PMU_CAP_AUX_PAUSE.
  if (action & kAuxStartPaused) return -EOPNOTSUPP;
  return 0;
}

// The possible CPUs do not change while a process runs: read once.
int possible_cpus() {
  static const int count = [] {
    if (std::FILE* f = std::fopen("/sys/devices/system/cpu/possible", "r")) {
      char line[256] = {};
      const bool ok = std::fgets(line, sizeof(line), f) != nullptr;
      std::fclose(f);
      if (ok) {
        const int n = parse_cpu_list_count(line);
        if (n > 0) return n;
      }
    }
    const long conf = sysconf(_SC_NPROCESSORS_CONF);
    return conf > 0 ? static_cast<int>(conf) : 1;
  }();
  return count;
}

// Read at most once a second: every thread a recorded program starts opens its events, and three
// /proc reads per open were a tenth of what starting a short process cost. A change of the sysctls
// reaches opens within a second instead of at once.
namespace {

std::mutex g_host_limits_mutex;
OpenLimits g_host_limits;
std::int64_t g_host_limits_at = 0;  // CLOCK_MONOTONIC_COARSE ns of the reading, 0: none

std::int64_t coarse_now_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  const std::int64_t ns = static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
  return ns != 0 ? ns : 1;
}

}  // namespace

OpenLimits host_limits() {
  constexpr std::int64_t kRefreshNs = 1'000'000'000;
  const std::int64_t now = coarse_now_ns();
  std::lock_guard lock(g_host_limits_mutex);
  if (g_host_limits_at == 0 || now - g_host_limits_at >= kRefreshNs) {
    OpenLimits limits;
    limits.max_sample_rate = static_cast<std::uint32_t>(
        read_long_file("/proc/sys/kernel/perf_event_max_sample_rate", limits.max_sample_rate));
    limits.max_stack = static_cast<std::uint32_t>(
        read_long_file("/proc/sys/kernel/perf_event_max_stack", limits.max_stack));
    limits.paranoid =
        static_cast<int>(read_long_file("/proc/sys/kernel/perf_event_paranoid", limits.paranoid));
    limits.nr_cpus = possible_cpus();
    limits.privileged = geteuid() == 0;
    g_host_limits = limits;
    g_host_limits_at = now;
  }
  return g_host_limits;
}

void prime_host_limits(const OpenLimits& limits) {
  std::lock_guard lock(g_host_limits_mutex);
  g_host_limits = limits;
  g_host_limits.privileged = geteuid() == 0;
  g_host_limits_at = coarse_now_ns();
}

std::uint64_t attr_flag_word(const perf_event_attr& attr) {
  std::uint64_t word = 0;
  std::memcpy(&word, reinterpret_cast<const unsigned char*>(&attr) + kFlagWordOffset, sizeof(word));
  return word;
}

std::uint32_t aux_action(const perf_event_attr& attr) {
  std::uint32_t value = 0;
  std::memcpy(&value, reinterpret_cast<const unsigned char*>(&attr) + kAuxActionOffset,
              sizeof(value));
  return value;
}

void set_aux_action(perf_event_attr& attr, std::uint32_t value) {
  std::memcpy(reinterpret_cast<unsigned char*>(&attr) + kAuxActionOffset, &value, sizeof(value));
}

int check_flags(unsigned long flags) {
  // Only the four defined PERF_FLAG_* bits.
  if (flags & ~kOpenFlagsAll) return -EINVAL;
  return 0;
}

int copy_attr(perf_event_attr* uattr, perf_event_attr& out, const OpenLimits& limits) {
  const auto* src = reinterpret_cast<const unsigned char*>(uattr);
  std::uint32_t size = 0;
  // get_user(size, &uattr->size): NULL or unmapped is EFAULT.
  if (!support::read_user(src + kSizeOffset, &size, sizeof(size))) return -EFAULT;
  // ABI quirk: size 0 is the first published struct.
  if (size == 0) size = kAttrSizeVer0;
  // Too small to be any published layout, or larger than a page.
  if (size < kAttrSizeVer0 || size > kPageSize) return attr_size_error(uattr);
  // A newer caller's extra fields must be unused.
  if (const int err = copy_struct(out, src, size); err != 0) {
    return err == -E2BIG ? attr_size_error(uattr) : err;
  }
  out.size = size;
  return validate_copied_attr(out, limits);
}

int perf_reg_validate(std::uint64_t mask) {
  // At least one register, none of the unsupported segment registers, no reserved bit.
  if (mask == 0 || (mask & (kRegX86NoSupport | kRegX86Reserved))) return -EINVAL;
  return 0;
}

int check_open_syscall(const perf_event_attr& attr, pid_t pid, int cpu, int /*group_fd*/,
                       unsigned long flags, const OpenLimits& limits) {
  // Unknown flags (already rejected before perf_copy_attr(); repeated for direct callers).
  if (int ret = check_flags(flags)) return ret;
  // Counting the kernel needs kernel-profiling permission.
  if (!attr.exclude_kernel) {
    if (int ret = perf_allow_kernel(limits)) return ret;
  }
  // Namespace records need CAP_PERFMON.
  if (attr.namespaces && !perfmon_capable(limits)) return -EACCES;
  if (attr.freq) {
    // A frequency above kernel.perf_event_max_sample_rate.
    if (attr.sample_freq > limits.max_sample_rate) return -EINVAL;
  } else {
    // A period that is negative as s64.
    if (attr.sample_period & (1ULL << 63)) return -EINVAL;
  }
  // Physical addresses need kernel-profiling permission.
  if (attr.sample_type & PERF_SAMPLE_PHYS_ADDR) {
    if (int ret = perf_allow_kernel(limits)) return ret;
  }
  // Interrupt registers are refused under lockdown.
  if ((attr.sample_type & PERF_SAMPLE_REGS_INTR) && limits.perf_locked_down) return -EPERM;
  // In cgroup mode pid is the cgroup fd and cpu must be given.
  if ((flags & PERF_FLAG_PID_CGROUP) && (pid == -1 || cpu == -1)) return -EINVAL;
  return 0;
}

int check_event_alloc(const perf_event_attr& attr, int cpu, bool has_task,
                      const OpenLimits& limits) {
  // cpu must be a possible CPU, or -1 for a task event.
  const int nr_cpus = limits.nr_cpus >= 0 ? limits.nr_cpus : possible_cpus();
  if (static_cast<unsigned>(cpu) >= static_cast<unsigned>(nr_cpus)) {
    if (!has_task || cpu != -1) return -EINVAL;
  }
  // sigtrap needs a task to signal.
  if (attr.sigtrap && !has_task) return -EINVAL;
  // inherit + PERF_SAMPLE_READ needs per-thread samples (PERF_SAMPLE_TID).
  if (attr.inherit && (attr.sample_type & PERF_SAMPLE_READ) &&
      !(attr.sample_type & PERF_SAMPLE_TID)) {
    return -EINVAL;
  }
  return 0;
}

int check_open(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd, unsigned long flags,
               const OpenLimits& limits) {
  if (int ret = check_open_syscall(attr, pid, cpu, group_fd, flags, limits)) return ret;
  const bool has_task = pid != -1 && !(flags & PERF_FLAG_PID_CGROUP);
  return check_event_alloc(attr, cpu, has_task, limits);
}

int check_software_event(const perf_event_attr& attr) {
  // perf_init_event() → perf_try_init_event() → the software PMU's event_init.
  if (int ret = perf_swevent_init(attr)) return ret;
  // perf_try_init_event()'s checks after event_init.
  if (int ret = perf_try_init_event_generic(attr)) return ret;
  // perf_event_alloc()'s checks on the PMU that was found.
  return check_pmu_aux_caps(attr);
}

int get_callchain_buffers(const perf_event_attr& attr, const OpenLimits& limits) {
  // Only callchain events allocate buffers; a per-event depth above the sysctl → EOVERFLOW.
  if ((attr.sample_type & PERF_SAMPLE_CALLCHAIN) && attr.sample_max_stack > limits.max_stack) {
    return -EOVERFLOW;
  }
  return 0;
}

int perf_event_set_clock(const perf_event_attr& attr, bool pmu_has_no_nmi_cap) {
  if (!attr.use_clockid) return 0;
  switch (attr.clockid) {
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_RAW:
      return 0;  // NMI-safe clocks
    case CLOCK_REALTIME:
    case CLOCK_BOOTTIME:
    case CLOCK_TAI:
      // Not NMI-safe: only for PMUs that never sample from NMI.
      return pmu_has_no_nmi_cap ? 0 : -EINVAL;
    default:
      return -EINVAL;  // Unknown clock.
  }
}

std::size_t read_size(std::uint64_t read_format, std::size_t nr_members) {
  std::size_t header = 0;
  std::size_t entry = sizeof(std::uint64_t);  // value
  std::size_t entries = 1;
  if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) header += sizeof(std::uint64_t);
  if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) header += sizeof(std::uint64_t);
  if (read_format & PERF_FORMAT_ID) entry += sizeof(std::uint64_t);
  if (read_format & PERF_FORMAT_LOST) entry += sizeof(std::uint64_t);
  if (read_format & PERF_FORMAT_GROUP) {
    header += sizeof(std::uint64_t);  // nr
    entries = std::max<std::size_t>(nr_members, 1);
  }
  return header + entries * entry;
}

int validate_size(std::uint64_t event_read_format, std::uint64_t leader_read_format,
                  std::span<const std::uint64_t> sibling_read_formats) {
  // The kernel sizes every member for leader + existing siblings + the new event, i.e.
  // nr_siblings + 2 entries, even when the new event is itself the (sibling-less) leader.
  const std::size_t members = sibling_read_formats.size() + 2;
  // The new event's own read size.
  if (read_size(event_read_format, members) > kReadSizeLimit) return -E2BIG;
  // The leader's.
  if (read_size(leader_read_format, members) > kReadSizeLimit) return -E2BIG;
  // Every existing sibling's.
  for (std::uint64_t format : sibling_read_formats) {
    if (read_size(format, members) > kReadSizeLimit) return -E2BIG;
  }
  return 0;
}

int check_aux_event(const perf_event_attr& attr) {
  // perf_need_aux_event(): aux_output or any aux action (has_aux_action()).
  const bool needs_aux_event =
      attr.aux_output || attr.aux_sample_size != 0 || (aux_action(attr) & (kAuxPause | kAuxResume));
  // perf_get_aux_event() fails without a leader, and no userperf leader has AUX.
  return needs_aux_event ? -EINVAL : 0;
}

int validate_standalone_software_open(perf_event_attr* uattr, pid_t pid, int cpu,
                                      unsigned long flags, const OpenLimits& limits,
                                      perf_event_attr& out) {
  if (int ret = check_flags(flags)) return ret;
  if (int ret = copy_attr(uattr, out, limits)) return ret;
  if (int ret = check_open(out, pid, cpu, -1, flags, limits)) return ret;
  if (int ret = check_software_event(out)) return ret;
  if (int ret = get_callchain_buffers(out, limits)) return ret;
  if (int ret = perf_event_set_clock(out)) return ret;
  if (int ret = validate_size(out.read_format, out.read_format, {})) return ret;
  return check_aux_event(out);
}

}  // namespace userperf::abi
