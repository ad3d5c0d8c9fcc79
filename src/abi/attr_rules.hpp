// Open-time validation of struct perf_event_attr and of perf_event_open()'s other arguments,
// mirroring Linux 6.18 (kernel/events/core.c, arch/x86/kernel/perf_regs.c) check for check and
// errno for errno.
//
// The kernel validates an open in this order; each step is one function here, named after the
// kernel function it mirrors. Every function returns 0 or a negative errno; stop at the first
// non-zero result.
//
//   1. check_flags()            SYSCALL perf_event_open: unknown flag bits
//   2. copy_attr()              perf_copy_attr(): size, reserved bits, formats, regs, stack
//   3. check_open_syscall()     SYSCALL perf_event_open: permissions, freq/period, PID_CGROUP
//      -- the engine resolves group_fd here (EBADF if not a perf fd, ENODEV if revoked), then the
//         target task when pid != -1 and !PID_CGROUP (ESRCH), then rejects a task event whose
//         group leader has a different `inherit` (EINVAL) --
//   4. check_event_alloc()      perf_event_alloc() before the PMU lookup: cpu range, sigtrap needs
//                               a task, inherit + SAMPLE_READ needs TID
//   5. check_software_event()   perf_init_event() for PERF_TYPE_SOFTWARE: perf_swevent_init /
//                               cpu_clock_event_init / task_clock_event_init, perf_try_init_event,
//                               and perf_event_alloc()'s PMU-capability checks that follow it
//   6. get_callchain_buffers()  perf_event_alloc(): sample_max_stack above the sysctl (EOVERFLOW)
//   7. perf_event_set_clock()   SYSCALL perf_event_open: use_clockid with an unknown clock
//      -- the engine checks ptrace-style permission on the task (EACCES), that a CPU-wide event's
//         CPU is online (ENODEV), the group rules (EINVAL), and FD_OUTPUT redirection (EINVAL) --
//   8. validate_size()          perf_event_validate_size(): read_size of any member > 16 KiB
//   9. check_aux_event()        perf_need_aux_event() / perf_get_aux_event() without a group: aux
//                               actions need an AUX-capable group leader (with a leader, the
//                               engine checks the leader's PMU: Engine::check_aux_event)
//
// check_open() runs steps 3 and 4 back to back (exact whenever the group_fd and pid lookups
// succeed); validate_standalone_software_open() runs steps 1-9 for a software event with no group,
// for callers and tests that do not need the engine.
#ifndef USERPERF_ABI_ATTR_RULES_HPP
#define USERPERF_ABI_ATTR_RULES_HPP

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace userperf::abi {

// Number of possible CPUs of this machine (the kernel's nr_cpu_ids), from
// /sys/devices/system/cpu/possible; sysconf(_SC_NPROCESSORS_CONF) if that cannot be read.
int possible_cpus();

// The system-wide settings and caller privileges that open-time checks depend on.
struct OpenLimits {
  std::uint32_t max_sample_rate = 100000;  // kernel.perf_event_max_sample_rate
  std::uint32_t max_stack = 127;           // kernel.perf_event_max_stack
  // nr_cpu_ids: cpu must be < this (or -1 for tasks); -1: this machine's (possible_cpus()).
  int nr_cpus = -1;
  int paranoid = 2;  // kernel.perf_event_paranoid
  // perfmon_capable(): CAP_PERFMON or CAP_SYS_ADMIN. Our tests run as root, and root is exempt
  // from every paranoid level, so the default emulates a privileged caller.
  bool privileged = true;
  bool perf_locked_down = false;  // security_locked_down(LOCKDOWN_PERF) (REGS_INTR)
};

// OpenLimits read from this machine: /proc/sys/kernel/perf_event_{max_sample_rate,max_stack,
// paranoid}, possible CPUs, and privileged = effective uid 0.
OpenLimits host_limits();
// Takes `limits` as this machine's for the next second, as if host_limits had just read them: a
// process the recorder starts gets them from the recorder's reading instead of /proc (the
// recorder's agent, in every process it enters). privileged stays this process's.
void prime_host_limits(const OpenLimits& limits);

// --- The ABI the emulated kernel (6.18) knows, beyond the installed 6.1 uapi header. ---

inline constexpr std::uint32_t kAttrSizeVer0 = PERF_ATTR_SIZE_VER0;  // 64
inline constexpr std::uint32_t kPageSize = 4096;                     // x86-64 PAGE_SIZE
inline constexpr std::uint64_t kSampleTypeMax = 1ULL << 25;  // PERF_SAMPLE_MAX (WEIGHT_STRUCT=24)
inline constexpr std::uint64_t kReadFormatMax = 1ULL << 5;   // PERF_FORMAT_MAX (LOST=4)
// PERF_SAMPLE_BRANCH_MAX: 6.8 added BRANCH_COUNTERS (bit 19), which the 6.1 header lacks.
inline constexpr std::uint64_t kBranchSampleMax = 1ULL << 20;
inline constexpr std::uint64_t kBranchPlmAll =
    PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_KERNEL | PERF_SAMPLE_BRANCH_HV;
inline constexpr unsigned long kOpenFlagsAll =
    PERF_FLAG_FD_NO_GROUP | PERF_FLAG_FD_OUTPUT | PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC;
inline constexpr std::uint32_t kReadSizeLimit = 16 * 1024;  // perf_event_validate_size()

// The flag bitfield word (offset 40): bits 0..37 are known (disabled .. sigtrap); 38..63 are
// __reserved_1 (6.18 has no defer_callchain/defer_output).
inline constexpr unsigned kLastKnownAttrFlagBit = 37;
// The u32 at offset 116, `__reserved_3` in the 6.1 header, is since 6.13 a union of aux_action
// with the bits below; its bits 3..31 are the kernel's __reserved_3.
inline constexpr std::uint32_t kAuxStartPaused = 1U << 0;
inline constexpr std::uint32_t kAuxPause = 1U << 1;
inline constexpr std::uint32_t kAuxResume = 1U << 2;
inline constexpr std::uint32_t kAuxActionReserved = ~7U;

// x86-64 perf_regs: valid general registers are bits 0..23 (PERF_REG_X86_64_MAX = 24) minus
// DS/ES/FS/GS; bits 24..31 are reserved; bits 32..63 are the XMM "extended" registers, which
// only PMUs with PERF_PMU_CAP_EXTENDED_REGS accept.
inline constexpr std::uint64_t kRegX86NoSupport =
    (1ULL << 12) | (1ULL << 13) | (1ULL << 14) | (1ULL << 15);  // DS, ES, FS, GS
inline constexpr std::uint64_t kRegX86Reserved = ((1ULL << 32) - 1) & ~((1ULL << 24) - 1);
inline constexpr std::uint64_t kRegExtendedMask = ~((1ULL << 32) - 1);  // PERF_REG_EXTENDED_MASK

// Accessors for fields the 6.1 header does not name.
std::uint64_t attr_flag_word(const perf_event_attr& attr);  // the 64-bit flag bitfield
std::uint32_t aux_action(const perf_event_attr& attr);      // the u32 at offset 116
void set_aux_action(perf_event_attr& attr, std::uint32_t value);

// --- The checks, in the kernel's order. ---

// SYSCALL perf_event_open: the first check, before the attr is even read. EINVAL.
int check_flags(unsigned long flags);

// perf_copy_attr(): reads uattr->size (0 means 64), copies min(size, 128) bytes of *uattr into
// `out` and zero-fills the rest, then validates. size < 64 or > page size, or a larger-than-known
// attr with a non-zero byte past our 128, fail with E2BIG after writing sizeof(perf_event_attr)
// (128) back into uattr->size. On success out.size is the caller's size and a zero
// sample_max_stack is replaced by limits.max_stack. The branch-privilege rule consults `limits`.
// The caller's bytes are read as copy_from_user would (support/user_memory): a NULL or unmapped
// attr, or a size that runs into an unmapped page, is EFAULT, never a fault - unless a non-zero
// tail byte comes before the unmapped page: the kernel's tail check reads word by word and says
// E2BIG there.
int copy_attr(perf_event_attr* uattr, perf_event_attr& out, const OpenLimits& limits = {});

// The x86-64 perf_reg_validate(): an empty mask, DS/ES/FS/GS, or a reserved bit → EINVAL.
int perf_reg_validate(std::uint64_t mask);

// SYSCALL perf_event_open between perf_copy_attr() and the group_fd lookup: the checks that need
// no engine state. (group_fd is resolved by the engine right after; it is accepted here so that
// callers can pass the syscall arguments through unchanged.)
int check_open_syscall(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd,
                       unsigned long flags, const OpenLimits& limits);

// perf_event_alloc() up to the PMU lookup. `has_task` is whether the event targets a task
// (pid != -1 and no PERF_FLAG_PID_CGROUP).
int check_event_alloc(const perf_event_attr& attr, int cpu, bool has_task,
                      const OpenLimits& limits);

// check_open_syscall() then check_event_alloc(): exact when group_fd is -1 (or valid) and pid
// names a live task; otherwise the engine's EBADF/ENODEV/ESRCH come between the two.
int check_open(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd, unsigned long flags,
               const OpenLimits& limits);

// What perf_init_event() and the rest of perf_event_alloc()'s PMU-dependent checks do for
// attr.type == PERF_TYPE_SOFTWARE (ENOENT for any other type).
//
// PERF_COUNT_SW_* configs that exist in 6.18 (all accepted here; the engine decides which it
// implements): CPU_CLOCK 0 and TASK_CLOCK 1 (hrtimer PMUs "cpu_clock"/"task_clock"), and on the
// "software" PMU PAGE_FAULTS 2, CONTEXT_SWITCHES 3, CPU_MIGRATIONS 4, PAGE_FAULTS_MIN 5,
// PAGE_FAULTS_MAJ 6, ALIGNMENT_FAULTS 7, EMULATION_FAULTS 8, DUMMY 9, BPF_OUTPUT 10,
// CGROUP_SWITCHES 11. Any config >= 12 (PERF_COUNT_SW_MAX) → ENOENT.
int check_software_event(const perf_event_attr& attr);

// get_callchain_buffers(), called by perf_event_alloc() for PERF_SAMPLE_CALLCHAIN events:
// sample_max_stack (already defaulted by copy_attr) above limits.max_stack → EOVERFLOW.
int get_callchain_buffers(const perf_event_attr& attr, const OpenLimits& limits);

// perf_event_set_clock() for use_clockid: only MONOTONIC, MONOTONIC_RAW, REALTIME, BOOTTIME and
// TAI exist (else EINVAL); the last three are not NMI-safe and need a PMU with
// PERF_PMU_CAP_NO_NMI (every software PMU has it).
int perf_event_set_clock(const perf_event_attr& attr, bool pmu_has_no_nmi_cap = true);

// __perf_event_read_size(): bytes read() returns for this read_format in a group of nr_members
// events (the leader included); nr_members only matters with PERF_FORMAT_GROUP.
std::size_t read_size(std::uint64_t read_format, std::size_t nr_members);

// perf_event_validate_size(): E2BIG if, once the new event joins, the read size of the new event,
// of the leader or of any existing sibling would exceed 16 KiB. `sibling_read_formats` are the
// leader's existing siblings (not the new event). For a new group leader pass its own read_format
// as `leader_read_format` and no siblings. Like the kernel, the count used is the leader's
// existing siblings + 2, which over-counts a new leader by one.
int validate_size(std::uint64_t event_read_format, std::uint64_t leader_read_format,
                  std::span<const std::uint64_t> sibling_read_formats);

// perf_need_aux_event() && !perf_get_aux_event() for an event without a group leader:
// aux_output, aux_sample_size, aux_pause or aux_resume need one → EINVAL (aux_output is refused
// earlier by check_pmu_aux_caps). With a leader the engine checks its PMU.
int check_aux_event(const perf_event_attr& attr);

// perf_event_alloc() after the PMU's event_init, for every PMU: aux_output needs
// PERF_PMU_CAP_AUX_OUTPUT and aux_start_paused PERF_PMU_CAP_AUX_PAUSE (EOPNOTSUPP; no userperf PMU
// has either); aux_pause with aux_resume is EINVAL.
int check_pmu_aux_caps(const perf_event_attr& attr);

// Steps 1-9 for a PERF_TYPE_SOFTWARE event opened without a group (group_fd == -1). The pid is
// taken to name a live task (pid 0 = the caller); `out` receives the copied attr.
int validate_standalone_software_open(perf_event_attr* uattr, pid_t pid, int cpu,
                                      unsigned long flags, const OpenLimits& limits,
                                      perf_event_attr& out);

}  // namespace userperf::abi

#endif  // USERPERF_ABI_ATTR_RULES_HPP
