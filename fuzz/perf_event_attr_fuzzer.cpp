// Arbitrary perf_event_attr bytes (any length, any size field) -> the open-time checks of
// abi/attr_rules.hpp and the C API's userperf_perf_event_open. The attr bytes end at a PROT_NONE
// page, as a caller's struct at the end of its mapping: reading past them must be EFAULT, never a
// fault. What attr_rules.hpp and kernel-perf-spec promise, checked per input:
// - copy_attr: size 0 means 64; a size < 64 or > 4096, or non-zero bytes past the 128 known, is
//   E2BIG with 128 written back into attr->size; bytes past the mapping are EFAULT; an accepted
//   attr is the caller's bytes (zero-filled past its size) with size = the caller's size,
//   sample_max_stack defaulted and a branch stack's privilege levels from exclude_*, and has no
//   reserved bit, only known sample_type and read_format bits, valid register masks, a u64-multiple
//   user stack below 64 KiB, not WEIGHT with WEIGHT_STRUCT, inherit under inherit_thread, not
//   remove_on_exec with enable_on_exec, and sigtrap only with remove_on_exec;
// - check_open: an accepted attr has a frequency within the sysctl or a non-negative period, a
//   possible cpu or -1 for a task, sigtrap only for a task, a cgroup only with pid and cpu;
// - validate_standalone_software_open fails with the first failing step's errno and accepts only
//   what every step accepts;
// - userperf_perf_event_open (pid 0, group_fd -1) of a software event fails at least where the
//   standalone checks (with this machine's limits) do, with their errno; a descriptor it returns
//   is closed.
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "abi/attr_rules.hpp"
#include "userperf/userperf.h"

using namespace userperf;

namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kKnownSize = sizeof(perf_event_attr);  // 128

[[noreturn]] void broken(const char* what, long long a = 0, long long b = 0) {
  std::fprintf(stderr, "perf_event_attr invariant broken: %s (%lld, %lld)\n", what, a, b);
  std::abort();
}

// One writable page followed by a PROT_NONE page.
std::uint8_t* guarded_page() {
  void* p = mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED || mprotect(static_cast<std::uint8_t*>(p) + kPage, kPage, PROT_NONE) != 0) {
    broken("mmap");
  }
  return static_cast<std::uint8_t*>(p);
}

bool regs_ok(std::uint64_t mask) {
  return abi::perf_reg_validate(mask) == 0;
}

void check_accepted_copy(const std::uint8_t* bytes, std::size_t available, std::uint32_t size,
                         const perf_event_attr& out, const abi::OpenLimits& limits) {
  // The copy is the caller's bytes, zero past their size, with the two documented rewrites.
  perf_event_attr want;
  std::memset(&want, 0, sizeof want);
  std::memcpy(&want, bytes, std::min<std::size_t>({size, kKnownSize, available}));
  want.size = size;
  if (want.sample_max_stack == 0) want.sample_max_stack = static_cast<__u16>(limits.max_stack);
  // A branch stack without a privilege level takes it from the exclude_* bits.
  if ((want.sample_type & PERF_SAMPLE_BRANCH_STACK) &&
      (want.branch_sample_type & abi::kBranchPlmAll) == 0) {
    if (!want.exclude_kernel) want.branch_sample_type |= PERF_SAMPLE_BRANCH_KERNEL;
    if (!want.exclude_user) want.branch_sample_type |= PERF_SAMPLE_BRANCH_USER;
    if (!want.exclude_hv) want.branch_sample_type |= PERF_SAMPLE_BRANCH_HV;
  }
  for (std::size_t i = 0; i < sizeof want; ++i) {
    if (reinterpret_cast<const std::uint8_t*>(&want)[i] !=
        reinterpret_cast<const std::uint8_t*>(&out)[i]) {
      broken("accepted copy differs from the bytes at", static_cast<long long>(i));
    }
  }
  if (size < abi::kAttrSizeVer0 || size > abi::kPageSize) broken("accepted size", size);
  for (std::size_t i = kKnownSize; i < size; ++i) {
    if (bytes[i] != 0) broken("accepted a non-zero byte past the known struct", i);
  }
  if (abi::attr_flag_word(out) >> (abi::kLastKnownAttrFlagBit + 1)) broken("reserved flag bits");
  if (out.__reserved_2 != 0 || (abi::aux_action(out) & abi::kAuxActionReserved) != 0) {
    broken("reserved field");
  }
  if (out.sample_type >= abi::kSampleTypeMax) broken("unknown sample_type bit");
  if (out.read_format >= abi::kReadFormatMax) broken("unknown read_format bit");
  if ((out.sample_type & PERF_SAMPLE_REGS_USER) && !regs_ok(out.sample_regs_user)) {
    broken("bad sample_regs_user");
  }
  if ((out.sample_type & PERF_SAMPLE_REGS_INTR) && !regs_ok(out.sample_regs_intr)) {
    broken("bad sample_regs_intr");
  }
  if ((out.sample_type & PERF_SAMPLE_STACK_USER) &&
      (out.sample_stack_user >= USHRT_MAX || out.sample_stack_user % 8 != 0)) {
    broken("bad sample_stack_user");
  }
  if ((out.sample_type & PERF_SAMPLE_WEIGHT) && (out.sample_type & PERF_SAMPLE_WEIGHT_STRUCT)) {
    broken("WEIGHT with WEIGHT_STRUCT");
  }
  if (out.inherit_thread && !out.inherit) broken("inherit_thread without inherit");
  if (out.remove_on_exec && out.enable_on_exec) broken("remove_on_exec with enable_on_exec");
  if (out.sigtrap && !out.remove_on_exec) broken("sigtrap without remove_on_exec");
  if ((out.sample_type & PERF_SAMPLE_BRANCH_STACK) &&
      out.branch_sample_type >= abi::kBranchSampleMax) {
    broken("unknown branch_sample_type bit");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static std::uint8_t* const page = guarded_page();
  if (size < 4) return 0;
  // data[0]: open flags (the four PERF_FLAG_* bits, bit 4 an unknown one); data[1]: pid and cpu;
  // data[2]: limits; data[3]: whether to open through the C API. The rest: the attr bytes.
  const unsigned long flags = (data[0] & 0xf) | ((data[0] & 0x10) ? (1UL << 7) : 0);
  static constexpr pid_t kPids[] = {0, -1, 1, 0};
  const pid_t pid = kPids[data[1] & 3];
  static constexpr int kCpus[] = {-1, 0, 1, 4096};
  const int cpu = kCpus[(data[1] >> 2) & 3];
  abi::OpenLimits limits;
  limits.nr_cpus = 2;
  limits.paranoid = (data[2] & 3) - 1;  // -1 .. 2
  limits.privileged = (data[2] & 4) == 0;
  limits.perf_locked_down = (data[2] & 8) != 0;
  limits.max_sample_rate = (data[2] & 16) ? 1000 : 100000;
  const bool open_through_api = (data[3] & 1) != 0;
  const std::uint8_t* bytes = data + 4;
  // A whole number of u64, so that the struct is aligned as a caller's is.
  const std::size_t available = std::min<std::size_t>(size - 4, kPage) & ~std::size_t{7};

  // The attr ends where the mapping does.
  std::uint8_t* const uattr_bytes = page + kPage - available;
  auto* const uattr = reinterpret_cast<perf_event_attr*>(uattr_bytes);
  const auto reset = [&] { std::memcpy(uattr_bytes, bytes, available); };

  // What copy_attr must decide from the size field alone.
  std::uint32_t raw_size = 0;
  if (available >= 8) std::memcpy(&raw_size, bytes + 4, sizeof raw_size);
  const std::uint32_t attr_size = raw_size == 0 ? abi::kAttrSizeVer0 : raw_size;
  bool tail_nonzero = false;
  for (std::size_t i = kKnownSize; i < std::min<std::size_t>(attr_size, available); ++i) {
    tail_nonzero |= bytes[i] != 0;
  }

  reset();
  perf_event_attr out;
  std::memset(&out, 0xa5, sizeof out);
  const int copied = abi::copy_attr(uattr, out, limits);
  const std::uint32_t written_size = available >= 8 ? uattr->size : 0;
  if (available < 8) {
    if (copied != -EFAULT) broken("size field past the mapping not EFAULT", copied);
    return 0;
  }
  if (attr_size < abi::kAttrSizeVer0 || attr_size > abi::kPageSize) {
    if (copied != -E2BIG) broken("size out of range not E2BIG", copied, attr_size);
  } else if (tail_nonzero) {
    if (copied != -E2BIG) broken("non-zero tail not E2BIG", copied, attr_size);
  } else if (attr_size > available) {
    if (copied != -EFAULT) broken("bytes past the mapping not EFAULT", copied, attr_size);
  }
  if (copied == -E2BIG && written_size != kKnownSize) broken("E2BIG write-back", written_size);
  if (copied != -E2BIG && written_size != raw_size) broken("size rewritten", written_size);
  if (copied == 0) check_accepted_copy(bytes, available, attr_size, out, limits);
  if (copied != 0 && copied != -E2BIG && copied != -EFAULT && copied != -EINVAL &&
      copied != -EACCES && copied != -EOPNOTSUPP) {
    broken("copy_attr errno", copied);
  }

  const int flags_ok = abi::check_flags(flags);
  int opened = -1;
  if (copied == 0 && flags_ok == 0) {
    opened = abi::check_open(out, pid, cpu, -1, flags, limits);
    if (opened == 0) {
      if (out.freq ? out.sample_freq > limits.max_sample_rate : (out.sample_period >> 63) != 0) {
        broken("accepted period/frequency", static_cast<long long>(out.sample_period));
      }
      const bool has_task = pid != -1 && (flags & PERF_FLAG_PID_CGROUP) == 0;
      if (!(cpu >= 0 && cpu < limits.nr_cpus) && !(cpu == -1 && has_task)) broken("accepted cpu");
      if (out.sigtrap && !has_task) broken("accepted sigtrap without a task");
      if ((flags & PERF_FLAG_PID_CGROUP) && (pid == -1 || cpu == -1)) broken("accepted cgroup");
    }
  }

  // The whole standalone validation: the first failing step, or 0 when every step passes.
  reset();
  perf_event_attr standalone_out;
  const int standalone =
      abi::validate_standalone_software_open(uattr, pid, cpu, flags, limits, standalone_out);
  const int first_failure = flags_ok != 0 ? flags_ok : copied != 0 ? copied : opened;
  if (first_failure != 0 && standalone != first_failure) {
    broken("standalone open does not fail at the first failing step", standalone, first_failure);
  }
  if (standalone == 0 && (abi::check_software_event(out) != 0 || out.type != PERF_TYPE_SOFTWARE)) {
    broken("standalone open accepted what a step refuses");
  }

  if (open_through_api && pid == 0) {
    // The C API checks with this machine's limits, not the fuzzed ones.
    static const abi::OpenLimits host = abi::host_limits();
    reset();
    const int host_standalone =
        abi::validate_standalone_software_open(uattr, 0, cpu, flags, host, standalone_out);
    reset();
    // What the C API opens runs in this process: never let it start (timers, signals). The
    // checks do not look at `disabled`.
    if (copied == 0) uattr->disabled = 1;
    errno = 0;
    const int fd = userperf_perf_event_open(uattr, 0, cpu, -1, flags);
    const int error = errno;
    // The standalone checks know the software PMU only; the C API has userperf's others too
    // (tracepoint, synthetic, calltrace, log), whose types are numbers of its own.
    std::uint32_t type = 0;
    std::memcpy(&type, bytes, sizeof type);
    const bool software = type == PERF_TYPE_SOFTWARE;
    // A cgroup event (pid a cgroup fd) is refused with EOPNOTSUPP where the kernel connects the
    // cgroup: after steps 1-5 (the PMU's init), so only their errno comes first.
    int want = host_standalone;
    if ((flags & PERF_FLAG_PID_CGROUP) != 0 && flags_ok == 0) {
      reset();
      perf_event_attr host_out;
      want = abi::copy_attr(uattr, host_out, host);
      if (want == 0) want = abi::check_open(host_out, 0, cpu, -1, flags, host);
      if (want == 0) want = abi::check_software_event(host_out);
      if (want == 0) want = -EOPNOTSUPP;
    }
    if (fd >= 0) {
      if (software && want != 0) broken("the C API accepted what the checks refuse", want);
      if (userperf_close(fd) != 0) broken("close");
    } else if (software && want != 0 && error != -want) {
      broken("the C API's errno differs from the checks'", error, want);
    }
  }
  return 0;
}
