// Unit tests for the open-time attribute rules (abi/attr_rules.hpp). Expected errnos are those of
// Linux 6.18, as observed on the oracle machine (kernel-oracle.md) and in kernel/events/core.c.
#include "abi/attr_rules.hpp"

#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/mman.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <vector>

namespace userperf::abi {
namespace {

constexpr std::uint32_t kOurSize = sizeof(perf_event_attr);

// An attr buffer larger than any size under test; the attr lives at its start.
struct AttrBuffer {
  alignas(8) std::array<unsigned char, 8192> bytes{};

  AttrBuffer() {
    attr().type = PERF_TYPE_SOFTWARE;
    attr().size = kOurSize;
    attr().config = PERF_COUNT_SW_CPU_CLOCK;
    attr().disabled = 1;
    attr().sample_period = 1000000;
  }
  perf_event_attr& attr() { return *reinterpret_cast<perf_event_attr*>(bytes.data()); }
  perf_event_attr* ptr() { return &attr(); }
  void set_flag_bit(unsigned bit) {
    std::uint64_t word = 0;
    std::memcpy(&word, bytes.data() + 40, sizeof(word));
    word |= 1ULL << bit;
    std::memcpy(bytes.data() + 40, &word, sizeof(word));
  }
};

OpenLimits unprivileged(int paranoid = 2) {
  OpenLimits limits;
  limits.privileged = false;
  limits.paranoid = paranoid;
  limits.nr_cpus = 2;
  return limits;
}

OpenLimits root() {
  OpenLimits limits;
  limits.nr_cpus = 2;
  return limits;
}

int copy(AttrBuffer& buf, const OpenLimits& limits = root()) {
  perf_event_attr out{};
  return copy_attr(buf.ptr(), out, limits);
}

perf_event_attr copied(AttrBuffer& buf, const OpenLimits& limits = root()) {
  perf_event_attr out{};
  EXPECT_EQ(copy_attr(buf.ptr(), out, limits), 0);
  return out;
}

int standalone(AttrBuffer& buf, pid_t pid = 0, int cpu = -1, unsigned long flags = 0,
               const OpenLimits& limits = root()) {
  perf_event_attr out{};
  return validate_standalone_software_open(buf.ptr(), pid, cpu, flags, limits, out);
}

// ----------------------------------------------------------------------------------- flags ---

TEST(CheckFlags, AcceptsTheFourDefinedFlags) {
  EXPECT_EQ(check_flags(0), 0);
  EXPECT_EQ(check_flags(PERF_FLAG_FD_NO_GROUP), 0);
  EXPECT_EQ(check_flags(PERF_FLAG_FD_OUTPUT), 0);
  EXPECT_EQ(check_flags(PERF_FLAG_PID_CGROUP), 0);
  EXPECT_EQ(check_flags(PERF_FLAG_FD_CLOEXEC), 0);
  EXPECT_EQ(check_flags(0xf), 0);
}

TEST(CheckFlags, UnknownFlagIsEinval) {
  EXPECT_EQ(check_flags(1UL << 4), -EINVAL);
  EXPECT_EQ(check_flags(1UL << 31), -EINVAL);
  EXPECT_EQ(check_flags(1UL << 63), -EINVAL);
}

// ---------------------------------------------------------------------- copy_attr: size ---

TEST(CopyAttrSize, ZeroMeansVer0) {
  AttrBuffer buf;
  buf.attr().size = 0;
  EXPECT_EQ(copied(buf).size, 64U);
  EXPECT_EQ(buf.attr().size, 0U) << "nothing is written back on success";
}

TEST(CopyAttrSize, BelowVer0IsE2bigWithWriteBack) {
  for (std::uint32_t size : {1U, 8U, 60U, 63U}) {
    AttrBuffer buf;
    buf.attr().size = size;
    EXPECT_EQ(copy(buf), -E2BIG) << size;
    EXPECT_EQ(buf.attr().size, kOurSize) << size;
  }
}

TEST(CopyAttrSize, AbovePageIsE2bigWithWriteBack) {
  AttrBuffer buf;
  buf.attr().size = 4097;
  EXPECT_EQ(copy(buf), -E2BIG);
  EXPECT_EQ(buf.attr().size, kOurSize);
}

TEST(CopyAttrSize, PageSizedWithZeroTailIsAccepted) {
  AttrBuffer buf;
  buf.attr().size = 4096;
  EXPECT_EQ(copied(buf).size, 4096U);
}

TEST(CopyAttrSize, NonZeroTailBeyondOurStructIsE2big) {
  AttrBuffer buf;
  buf.attr().size = 136;
  buf.bytes[130] = 1;  // the kernel's config3; unknown to userperf
  EXPECT_EQ(copy(buf), -E2BIG);
  EXPECT_EQ(buf.attr().size, kOurSize);

  AttrBuffer far;
  far.attr().size = 4096;
  far.bytes[4095] = 1;
  EXPECT_EQ(copy(far), -E2BIG);
}

// An attr whose declared size runs past the end of its mapping: the kernel's check_zeroed_user()
// reads the tail word by word, so a non-zero byte before the unmapped page is E2BIG and only a
// zero tail that reaches the page is EFAULT (checked on Linux 6.18 with a 768-byte size and a
// non-zero byte at offset 140: E2BIG, size written back; the same with no non-zero byte: EFAULT).
// Found by fuzz/perf_event_attr_fuzzer.cpp.
TEST(CopyAttrSize, NonZeroTailBeforeAnUnmappedPageIsE2bigNotEfault) {
  constexpr std::size_t kPage = 4096;
  void* mapping =
      mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapping, MAP_FAILED);
  auto* page = static_cast<unsigned char*>(mapping);
  ASSERT_EQ(mprotect(page + kPage, kPage, PROT_NONE), 0);
  for (const std::size_t available : {144, 264, 504}) {
    for (const bool nonzero : {false, true}) {
      unsigned char* bytes = page + kPage - available;
      std::memset(bytes, 0, available);
      auto* attr = reinterpret_cast<perf_event_attr*>(bytes);
      attr->type = PERF_TYPE_SOFTWARE;
      attr->size = 768;
      if (nonzero) bytes[140] = 1;
      perf_event_attr out{};
      EXPECT_EQ(copy_attr(attr, out, root()), nonzero ? -E2BIG : -EFAULT) << available;
      EXPECT_EQ(attr->size, nonzero ? kOurSize : 768U) << available;
    }
  }
  munmap(mapping, 2 * kPage);
}

TEST(CopyAttrSize, ZeroTailBeyondOurStructIsAccepted) {
  AttrBuffer buf;
  buf.attr().size = 136;
  EXPECT_EQ(copied(buf).size, 136U);
}

TEST(CopyAttrSize, OddSizesAreAccepted) {
  AttrBuffer buf;
  buf.attr().size = 65;
  EXPECT_EQ(copied(buf).size, 65U);
}

TEST(CopyAttrSize, ShortAttrCopiesOnlyItsBytes) {
  AttrBuffer buf;
  buf.attr().size = 72;                   // VER1: up to config2
  buf.attr().branch_sample_type = ~0ULL;  // offset 72: beyond the declared size, ignored
  buf.attr().sig_data = 42;
  const perf_event_attr out = copied(buf);
  EXPECT_EQ(out.branch_sample_type, 0U);
  EXPECT_EQ(out.sig_data, 0U);
  EXPECT_EQ(out.config, static_cast<__u64>(PERF_COUNT_SW_CPU_CLOCK));
}

TEST(CopyAttrSize, FieldsPastTheDeclaredSizeAreNotValidated) {
  AttrBuffer buf;
  buf.attr().size = 64;
  buf.attr().__reserved_2 = 1;  // offset 110: past 64 bytes
  EXPECT_EQ(copy(buf), 0);
}

// ----------------------------------------------------------------- copy_attr: reserved ---

TEST(CopyAttrReserved, FlagBitsBeyondSigtrapAreEinval) {
  for (unsigned bit : {38U, 39U, 50U, 63U}) {
    AttrBuffer buf;
    buf.set_flag_bit(bit);
    EXPECT_EQ(copy(buf), -EINVAL) << bit;
  }
}

TEST(CopyAttrReserved, Reserved2IsEinval) {
  AttrBuffer buf;
  buf.attr().__reserved_2 = 1;
  EXPECT_EQ(copy(buf), -EINVAL);
}

TEST(CopyAttrReserved, AuxActionReservedBitsAreEinval) {
  AttrBuffer buf;
  set_aux_action(buf.attr(), 1U << 3);
  EXPECT_EQ(copy(buf), -EINVAL);
  AttrBuffer top;
  set_aux_action(top.attr(), 1U << 31);
  EXPECT_EQ(copy(top), -EINVAL);
}

TEST(CopyAttrReserved, AuxActionDefinedBitsPassCopy) {
  AttrBuffer buf;
  set_aux_action(buf.attr(), kAuxStartPaused | kAuxPause | kAuxResume);
  EXPECT_EQ(copy(buf), 0);
}

// -------------------------------------------------------- copy_attr: sample/read format ---

TEST(CopyAttrFormats, UnknownSampleTypeBitIsEinval) {
  AttrBuffer buf;
  buf.attr().sample_type = 1ULL << 25;
  EXPECT_EQ(copy(buf), -EINVAL);
  AttrBuffer top;
  top.attr().sample_type = 1ULL << 63;
  EXPECT_EQ(copy(top), -EINVAL);
}

TEST(CopyAttrFormats, LastKnownSampleTypeBitIsAccepted) {
  AttrBuffer buf;
  buf.attr().sample_type = PERF_SAMPLE_WEIGHT_STRUCT;  // bit 24
  EXPECT_EQ(copy(buf), 0);
}

TEST(CopyAttrFormats, UnknownReadFormatBitIsEinval) {
  AttrBuffer buf;
  buf.attr().read_format = 1ULL << 5;
  EXPECT_EQ(copy(buf), -EINVAL);
  AttrBuffer all;
  all.attr().read_format = 0x1f;
  EXPECT_EQ(copy(all), 0);
}

TEST(CopyAttrFormats, WeightAndWeightStructTogetherAreEinval) {
  AttrBuffer buf;
  buf.attr().sample_type = PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT;
  EXPECT_EQ(copy(buf), -EINVAL);
}

// ---------------------------------------------------------------- copy_attr: branches ---

TEST(CopyAttrBranch, NoBranchTypeBitIsEinval) {
  AttrBuffer zero;
  zero.attr().sample_type = PERF_SAMPLE_BRANCH_STACK;
  EXPECT_EQ(copy(zero), -EINVAL);
  AttrBuffer plm_only;
  plm_only.attr().sample_type = PERF_SAMPLE_BRANCH_STACK;
  plm_only.attr().branch_sample_type = kBranchPlmAll;
  EXPECT_EQ(copy(plm_only), -EINVAL);
}

TEST(CopyAttrBranch, UnknownBranchBitIsEinval) {
  AttrBuffer buf;
  buf.attr().sample_type = PERF_SAMPLE_BRANCH_STACK;
  buf.attr().branch_sample_type = PERF_SAMPLE_BRANCH_ANY | (1ULL << 20);
  EXPECT_EQ(copy(buf), -EINVAL);
}

TEST(CopyAttrBranch, BranchCountersBitIsKnown) {
  // 6.8's PERF_SAMPLE_BRANCH_COUNTERS (bit 19) is missing from the 6.1 header but valid.
  AttrBuffer buf;
  buf.attr().sample_type = PERF_SAMPLE_BRANCH_STACK;
  buf.attr().branch_sample_type = 1ULL << 19;
  EXPECT_EQ(copy(buf), 0);
}

TEST(CopyAttrBranch, PrivilegeLevelIsInheritedFromExcludeBits) {
  AttrBuffer buf;
  buf.attr().sample_type = PERF_SAMPLE_BRANCH_STACK;
  buf.attr().branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
  buf.attr().exclude_kernel = 1;
  const perf_event_attr out = copied(buf);
  EXPECT_EQ(
      out.branch_sample_type,
      static_cast<__u64>(PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_HV));
}

TEST(CopyAttrBranch, ExplicitPrivilegeLevelIsKept) {
  AttrBuffer buf;
  buf.attr().sample_type = PERF_SAMPLE_BRANCH_STACK;
  buf.attr().branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER;
  EXPECT_EQ(copied(buf).branch_sample_type,
            static_cast<__u64>(PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER));
}

TEST(CopyAttrBranch, KernelBranchesNeedPermission) {
  AttrBuffer buf;
  buf.attr().sample_type = PERF_SAMPLE_BRANCH_STACK;
  buf.attr().branch_sample_type = PERF_SAMPLE_BRANCH_ANY;  // inherits KERNEL and HV
  EXPECT_EQ(copy(buf, unprivileged(2)), -EACCES);
  EXPECT_EQ(copy(buf, unprivileged(1)), 0);
  EXPECT_EQ(copy(buf, root()), 0);

  AttrBuffer user_only;
  user_only.attr().sample_type = PERF_SAMPLE_BRANCH_STACK;
  user_only.attr().branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
  user_only.attr().exclude_kernel = 1;
  user_only.attr().exclude_hv = 1;
  EXPECT_EQ(copy(user_only, unprivileged(2)), 0);
}

TEST(CopyAttrBranch, BranchFieldIgnoredWithoutBranchStack) {
  AttrBuffer buf;
  buf.attr().branch_sample_type = ~0ULL;
  EXPECT_EQ(copy(buf), 0);
}

// --------------------------------------------------------------- copy_attr: registers ---

TEST(PerfRegValidate, X8664Rules) {
  EXPECT_EQ(perf_reg_validate(0), -EINVAL);                              // no register
  EXPECT_EQ(perf_reg_validate(1ULL << 0), 0);                            // AX
  EXPECT_EQ(perf_reg_validate((1ULL << 24) - 1 - kRegX86NoSupport), 0);  // every valid GPR
  for (unsigned seg : {12U, 13U, 14U, 15U}) {                            // DS, ES, FS, GS
    EXPECT_EQ(perf_reg_validate(1ULL << seg), -EINVAL) << seg;
  }
  EXPECT_EQ(perf_reg_validate(1ULL << 24), -EINVAL);  // reserved 24..31
  EXPECT_EQ(perf_reg_validate(1ULL << 31), -EINVAL);
  EXPECT_EQ(perf_reg_validate(1ULL << 40), 0) << "XMM bits pass; the PMU refuses them";
}

TEST(CopyAttrRegs, RegsUserMaskIsValidatedOnlyWhenSampled) {
  AttrBuffer empty;
  empty.attr().sample_type = PERF_SAMPLE_REGS_USER;
  EXPECT_EQ(copy(empty), -EINVAL);
  AttrBuffer ds;
  ds.attr().sample_type = PERF_SAMPLE_REGS_USER;
  ds.attr().sample_regs_user = 1ULL << 12;
  EXPECT_EQ(copy(ds), -EINVAL);
  AttrBuffer unsampled;
  unsampled.attr().sample_regs_user = 1ULL << 12;
  EXPECT_EQ(copy(unsampled), 0);
}

TEST(CopyAttrRegs, RegsIntrMaskIsValidated) {
  AttrBuffer empty;
  empty.attr().sample_type = PERF_SAMPLE_REGS_INTR;
  EXPECT_EQ(copy(empty), -EINVAL);
  AttrBuffer reserved;
  reserved.attr().sample_type = PERF_SAMPLE_REGS_INTR;
  reserved.attr().sample_regs_intr = 1ULL << 30;
  EXPECT_EQ(copy(reserved), -EINVAL);
  AttrBuffer ok;
  ok.attr().sample_type = PERF_SAMPLE_REGS_INTR;
  ok.attr().sample_regs_intr = 0xff;
  EXPECT_EQ(copy(ok), 0);
}

// ------------------------------------------------------------------ copy_attr: stacks ---

TEST(CopyAttrStack, StackUserSizeRules) {
  // Spec §9 check 31 and the oracle table.
  const std::pair<std::uint32_t, int> cases[] = {
      {0, 0},           {8, 0},           {12, -EINVAL},    {65, -EINVAL},         {65528, 0},
      {65534, -EINVAL}, {65535, -EINVAL}, {65536, -EINVAL}, {0xfffffff8U, -EINVAL}};
  for (const auto& [size, expected] : cases) {
    AttrBuffer buf;
    buf.attr().sample_type = PERF_SAMPLE_STACK_USER;
    buf.attr().sample_stack_user = size;
    EXPECT_EQ(copy(buf), expected) << size;
  }
}

TEST(CopyAttrStack, StackUserSizeIgnoredWhenNotSampled) {
  AttrBuffer buf;
  buf.attr().sample_stack_user = 13;
  EXPECT_EQ(copy(buf), 0);
}

TEST(CopyAttrStack, ZeroMaxStackTakesTheSysctl) {
  AttrBuffer buf;
  EXPECT_EQ(copied(buf).sample_max_stack, 127U);
  OpenLimits limits = root();
  limits.max_stack = 50;
  EXPECT_EQ(copied(buf, limits).sample_max_stack, 50U);
  AttrBuffer given;
  given.attr().sample_max_stack = 9;
  EXPECT_EQ(copied(given).sample_max_stack, 9U);
}

// ------------------------------------------------------------- copy_attr: flag combos ---

TEST(CopyAttrFlags, InheritThreadNeedsInherit) {
  AttrBuffer buf;
  buf.attr().inherit_thread = 1;
  EXPECT_EQ(copy(buf), -EINVAL);
  buf.attr().inherit = 1;
  EXPECT_EQ(copy(buf), 0);
}

TEST(CopyAttrFlags, RemoveOnExecExcludesEnableOnExec) {
  AttrBuffer buf;
  buf.attr().remove_on_exec = 1;
  buf.attr().enable_on_exec = 1;
  EXPECT_EQ(copy(buf), -EINVAL);
}

TEST(CopyAttrFlags, SigtrapNeedsRemoveOnExec) {
  AttrBuffer buf;
  buf.attr().sigtrap = 1;
  EXPECT_EQ(copy(buf), -EINVAL);
  buf.attr().remove_on_exec = 1;
  EXPECT_EQ(copy(buf), 0);
}

TEST(CopyAttr, OrderReservedBeforeFormats) {
  // Every failure here is EINVAL; check that a size error wins over all of them.
  AttrBuffer buf;
  buf.attr().sample_type = 1ULL << 40;
  buf.attr().size = 60;
  EXPECT_EQ(copy(buf), -E2BIG);
}

TEST(CopyAttr, BranchPermissionBeforeRegsUser) {
  AttrBuffer buf;
  buf.attr().sample_type = PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER;
  buf.attr().branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
  EXPECT_EQ(copy(buf, unprivileged(2)), -EACCES);
}

TEST(CopyAttr, SuccessLeavesCallerAttrUntouched) {
  AttrBuffer buf;
  buf.attr().sample_type = PERF_SAMPLE_BRANCH_STACK;
  buf.attr().branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
  const auto before = buf.bytes;
  (void)copied(buf);
  EXPECT_EQ(before, buf.bytes);
}

// ------------------------------------------------------------------ check_open_syscall ---

TEST(CheckOpenSyscall, KernelCountingNeedsPermission) {
  AttrBuffer buf;
  const perf_event_attr a = copied(buf);  // exclude_kernel = 0
  EXPECT_EQ(check_open_syscall(a, 0, -1, -1, 0, unprivileged(2)), -EACCES);
  EXPECT_EQ(check_open_syscall(a, 0, -1, -1, 0, unprivileged(1)), 0);
  EXPECT_EQ(check_open_syscall(a, 0, -1, -1, 0, root()), 0);
  buf.attr().exclude_kernel = 1;
  EXPECT_EQ(check_open_syscall(copied(buf), 0, -1, -1, 0, unprivileged(2)), 0);
}

TEST(CheckOpenSyscall, NamespacesNeedPerfmon) {
  AttrBuffer buf;
  buf.attr().exclude_kernel = 1;
  buf.attr().namespaces = 1;
  EXPECT_EQ(check_open_syscall(copied(buf), 0, -1, -1, 0, unprivileged(-1)), -EACCES);
  EXPECT_EQ(check_open_syscall(copied(buf), 0, -1, -1, 0, root()), 0);
}

TEST(CheckOpenSyscall, FrequencyAboveMaxSampleRateIsEinval) {
  AttrBuffer buf;
  buf.attr().freq = 1;
  buf.attr().sample_freq = 100000;
  EXPECT_EQ(check_open_syscall(copied(buf), 0, -1, -1, 0, root()), 0);
  buf.attr().sample_freq = 100001;
  EXPECT_EQ(check_open_syscall(copied(buf), 0, -1, -1, 0, root()), -EINVAL);
  OpenLimits low = root();
  low.max_sample_rate = 1000;
  buf.attr().sample_freq = 1001;
  EXPECT_EQ(check_open_syscall(copied(buf), 0, -1, -1, 0, low), -EINVAL);
  buf.attr().sample_freq = 0;
  EXPECT_EQ(check_open_syscall(copied(buf), 0, -1, -1, 0, root()), 0);
}

TEST(CheckOpenSyscall, NegativePeriodIsEinval) {
  AttrBuffer buf;
  buf.attr().sample_period = 1ULL << 63;
  EXPECT_EQ(check_open_syscall(copied(buf), 0, -1, -1, 0, root()), -EINVAL);
  buf.attr().sample_period = (1ULL << 63) - 1;
  EXPECT_EQ(check_open_syscall(copied(buf), 0, -1, -1, 0, root()), 0);
  // In frequency mode the same bits are a (too high) frequency, not a period.
  buf.attr().freq = 1;
  buf.attr().sample_freq = 1ULL << 63;
  EXPECT_EQ(check_open_syscall(copied(buf), 0, -1, -1, 0, root()), -EINVAL);
}

TEST(CheckOpenSyscall, PhysAddrNeedsKernelPermission) {
  AttrBuffer buf;
  buf.attr().exclude_kernel = 1;
  buf.attr().sample_type = PERF_SAMPLE_PHYS_ADDR;
  EXPECT_EQ(check_open_syscall(copied(buf), 0, -1, -1, 0, unprivileged(2)), -EACCES);
  EXPECT_EQ(check_open_syscall(copied(buf), 0, -1, -1, 0, root()), 0);
}

TEST(CheckOpenSyscall, RegsIntrRefusedUnderLockdown) {
  AttrBuffer buf;
  buf.attr().sample_type = PERF_SAMPLE_REGS_INTR;
  buf.attr().sample_regs_intr = 1;
  OpenLimits locked = root();
  locked.perf_locked_down = true;
  EXPECT_EQ(check_open_syscall(copied(buf), 0, -1, -1, 0, locked), -EPERM);
  EXPECT_EQ(check_open_syscall(copied(buf), 0, -1, -1, 0, root()), 0);
}

TEST(CheckOpenSyscall, PidCgroupNeedsPidAndCpu) {
  AttrBuffer buf;
  const perf_event_attr a = copied(buf);
  EXPECT_EQ(check_open_syscall(a, -1, 0, -1, PERF_FLAG_PID_CGROUP, root()), -EINVAL);
  EXPECT_EQ(check_open_syscall(a, 5, -1, -1, PERF_FLAG_PID_CGROUP, root()), -EINVAL);
  EXPECT_EQ(check_open_syscall(a, 5, 0, -1, PERF_FLAG_PID_CGROUP, root()), 0);
}

TEST(CheckOpenSyscall, UnknownFlagIsEinval) {
  AttrBuffer buf;
  EXPECT_EQ(check_open_syscall(copied(buf), 0, -1, -1, 1UL << 4, root()), -EINVAL);
}

TEST(CheckOpenSyscall, PermissionBeforeFrequency) {
  AttrBuffer buf;
  buf.attr().freq = 1;
  buf.attr().sample_freq = 1000000;
  EXPECT_EQ(check_open_syscall(copied(buf), 0, -1, -1, 0, unprivileged(2)), -EACCES);
}

// ------------------------------------------------------------------- check_event_alloc ---

TEST(CheckEventAlloc, CpuRange) {
  AttrBuffer buf;
  const perf_event_attr a = copied(buf);
  const OpenLimits limits = root();  // 2 CPUs
  EXPECT_EQ(check_event_alloc(a, 0, true, limits), 0);
  EXPECT_EQ(check_event_alloc(a, 1, false, limits), 0);
  EXPECT_EQ(check_event_alloc(a, 2, true, limits), -EINVAL) << "not ENODEV: beyond nr_cpu_ids";
  EXPECT_EQ(check_event_alloc(a, -1, true, limits), 0);
  EXPECT_EQ(check_event_alloc(a, -1, false, limits), -EINVAL) << "pid == -1 && cpu == -1";
  EXPECT_EQ(check_event_alloc(a, -2, true, limits), -EINVAL);
}

TEST(CheckEventAlloc, SigtrapNeedsTask) {
  AttrBuffer buf;
  buf.attr().sigtrap = 1;
  buf.attr().remove_on_exec = 1;
  const perf_event_attr a = copied(buf);
  EXPECT_EQ(check_event_alloc(a, 0, false, root()), -EINVAL);
  EXPECT_EQ(check_event_alloc(a, -1, true, root()), 0);
}

TEST(CheckEventAlloc, InheritSampleReadNeedsTid) {
  // Spec §9 check 35.
  AttrBuffer buf;
  buf.attr().inherit = 1;
  buf.attr().sample_type = PERF_SAMPLE_READ;
  EXPECT_EQ(check_event_alloc(copied(buf), -1, true, root()), -EINVAL);
  buf.attr().sample_type = PERF_SAMPLE_READ | PERF_SAMPLE_TID;
  EXPECT_EQ(check_event_alloc(copied(buf), -1, true, root()), 0);
  buf.attr().read_format = PERF_FORMAT_GROUP;
  EXPECT_EQ(check_event_alloc(copied(buf), -1, true, root()), 0);
  buf.attr().inherit = 0;
  buf.attr().sample_type = PERF_SAMPLE_READ;
  EXPECT_EQ(check_event_alloc(copied(buf), -1, true, root()), 0);
}

TEST(CheckOpen, CombinesSyscallAndAllocChecks) {
  AttrBuffer buf;
  const perf_event_attr a = copied(buf);
  EXPECT_EQ(check_open(a, 0, -1, -1, 0, root()), 0);
  EXPECT_EQ(check_open(a, -1, -1, -1, 0, root()), -EINVAL);
  EXPECT_EQ(check_open(a, -1, 0, -1, 0, root()), 0);
  EXPECT_EQ(check_open(a, 0, 7, -1, 0, root()), -EINVAL);
  // With PID_CGROUP there is no task, so a sigtrap event is refused.
  buf.attr().sigtrap = 1;
  buf.attr().remove_on_exec = 1;
  EXPECT_EQ(check_open(copied(buf), 3, 0, -1, PERF_FLAG_PID_CGROUP, root()), -EINVAL);
  EXPECT_EQ(check_open(copied(buf), 0, 0, -1, 0, root()), 0);
}

// ---------------------------------------------------------------- check_software_event ---

TEST(CheckSoftwareEvent, EveryExistingConfigIsAccepted) {
  for (std::uint64_t config = 0; config < PERF_COUNT_SW_MAX; ++config) {
    AttrBuffer buf;
    buf.attr().config = config;
    EXPECT_EQ(check_software_event(copied(buf)), 0) << config;
  }
}

TEST(CheckSoftwareEvent, UnknownConfigIsEnoent) {
  for (std::uint64_t config : {std::uint64_t{PERF_COUNT_SW_MAX}, std::uint64_t{64},
                               std::uint64_t{1} << 32, ~std::uint64_t{0}}) {
    AttrBuffer buf;
    buf.attr().config = config;
    EXPECT_EQ(check_software_event(copied(buf)), -ENOENT) << config;
  }
}

TEST(CheckSoftwareEvent, OtherTypeIsEnoent) {
  AttrBuffer buf;
  buf.attr().type = PERF_TYPE_HARDWARE;
  EXPECT_EQ(check_software_event(copied(buf)), -ENOENT);
}

TEST(CheckSoftwareEvent, BranchStackIsEopnotsupp) {
  // Spec §9 check 34; the branch check precedes the config check.
  for (std::uint64_t config :
       {std::uint64_t{PERF_COUNT_SW_CPU_CLOCK}, std::uint64_t{PERF_COUNT_SW_TASK_CLOCK},
        std::uint64_t{PERF_COUNT_SW_DUMMY}, std::uint64_t{20}}) {
    AttrBuffer buf;
    buf.attr().config = config;
    buf.attr().sample_type = PERF_SAMPLE_BRANCH_STACK;
    buf.attr().branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
    EXPECT_EQ(check_software_event(copied(buf)), -EOPNOTSUPP) << config;
  }
}

TEST(CheckSoftwareEvent, ExtendedRegistersAreEopnotsupp) {
  AttrBuffer user;
  user.attr().sample_regs_user = 1ULL << 40;  // even without PERF_SAMPLE_REGS_USER
  EXPECT_EQ(check_software_event(copied(user)), -EOPNOTSUPP);
  AttrBuffer intr;
  intr.attr().sample_type = PERF_SAMPLE_REGS_INTR;
  intr.attr().sample_regs_intr = 1ULL | (1ULL << 63);
  EXPECT_EQ(check_software_event(copied(intr)), -EOPNOTSUPP);
  // The PMU's own event_init runs first.
  AttrBuffer bad_config;
  bad_config.attr().config = 20;
  bad_config.attr().sample_regs_user = 1ULL << 40;
  EXPECT_EQ(check_software_event(copied(bad_config)), -ENOENT);
}

TEST(CheckSoftwareEvent, AuxCapabilities) {
  AttrBuffer output;
  output.attr().aux_output = 1;
  EXPECT_EQ(check_software_event(copied(output)), -EOPNOTSUPP);

  AttrBuffer output_pause;
  output_pause.attr().aux_output = 1;
  set_aux_action(output_pause.attr(), kAuxPause | kAuxResume);
  EXPECT_EQ(check_software_event(copied(output_pause)), -EOPNOTSUPP);

  AttrBuffer pause_resume;
  set_aux_action(pause_resume.attr(), kAuxPause | kAuxResume);
  EXPECT_EQ(check_software_event(copied(pause_resume)), -EINVAL);

  AttrBuffer start_paused;
  set_aux_action(start_paused.attr(), kAuxStartPaused);
  EXPECT_EQ(check_software_event(copied(start_paused)), -EOPNOTSUPP);

  AttrBuffer pause;
  set_aux_action(pause.attr(), kAuxPause);
  EXPECT_EQ(check_software_event(copied(pause)), 0) << "refused later, by check_aux_event";
}

// --------------------------------------------------------------- get_callchain_buffers ---

TEST(GetCallchainBuffers, MaxStackAboveSysctlIsEoverflow) {
  AttrBuffer buf;
  buf.attr().sample_type = PERF_SAMPLE_CALLCHAIN;
  buf.attr().sample_max_stack = 127;
  EXPECT_EQ(get_callchain_buffers(copied(buf), root()), 0);
  buf.attr().sample_max_stack = 128;
  EXPECT_EQ(get_callchain_buffers(copied(buf), root()), -EOVERFLOW);
  buf.attr().sample_max_stack = 200;
  EXPECT_EQ(get_callchain_buffers(copied(buf), root()), -EOVERFLOW);
  buf.attr().sample_type = 0;
  EXPECT_EQ(get_callchain_buffers(copied(buf), root()), 0) << "only callchain events";
}

// ---------------------------------------------------------------- perf_event_set_clock ---

TEST(PerfEventSetClock, KnownClocks) {
  AttrBuffer buf;
  buf.attr().use_clockid = 1;
  for (int clock :
       {CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_TAI}) {
    buf.attr().clockid = clock;
    EXPECT_EQ(perf_event_set_clock(copied(buf)), 0) << clock;
  }
  for (int clock : {CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC_COARSE,
                    CLOCK_REALTIME_ALARM, -1, 12, 1000}) {
    buf.attr().clockid = clock;
    EXPECT_EQ(perf_event_set_clock(copied(buf)), -EINVAL) << clock;
  }
}

TEST(PerfEventSetClock, NonNmiSafeClocksNeedNoNmiPmu) {
  AttrBuffer buf;
  buf.attr().use_clockid = 1;
  buf.attr().clockid = CLOCK_REALTIME;
  EXPECT_EQ(perf_event_set_clock(copied(buf), false), -EINVAL);
  buf.attr().clockid = CLOCK_MONOTONIC_RAW;
  EXPECT_EQ(perf_event_set_clock(copied(buf), false), 0);
}

TEST(PerfEventSetClock, IgnoredWithoutUseClockid) {
  AttrBuffer buf;
  buf.attr().clockid = 1000;
  EXPECT_EQ(perf_event_set_clock(copied(buf)), 0);
}

// --------------------------------------------------------------- read_size / validate ---

TEST(ReadSize, MatchesTheReadFormatLayout) {
  EXPECT_EQ(read_size(0, 1), 8U);
  EXPECT_EQ(read_size(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING, 1), 24U);
  EXPECT_EQ(read_size(PERF_FORMAT_ID | PERF_FORMAT_LOST, 1), 24U);
  EXPECT_EQ(read_size(PERF_FORMAT_ID, 10), 16U) << "members only count with GROUP";
  // nr, enabled, running, then {value, id, lost} per member (oracle §1: 2 members).
  EXPECT_EQ(read_size(0x1f, 2), 8U * 3 + 2 * 24U);
  EXPECT_EQ(read_size(PERF_FORMAT_GROUP, 1), 16U);
}

TEST(ValidateSize, StandaloneEventsFit) {
  EXPECT_EQ(validate_size(0x1f, 0x1f, {}), 0);
}

TEST(ValidateSize, GroupReadAbove16KiBIsE2big) {
  constexpr std::uint64_t kFormat = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST;
  // 8 (nr) + members * 24: 682 members fit (16376 bytes), 683 do not.
  std::vector<std::uint64_t> siblings(680, 0);
  EXPECT_EQ(validate_size(kFormat, kFormat, siblings), 0);
  siblings.push_back(0);
  EXPECT_EQ(validate_size(kFormat, kFormat, siblings), -E2BIG);
  // The offender may be the leader or an existing sibling rather than the new event.
  EXPECT_EQ(validate_size(0, kFormat, siblings), -E2BIG);
  std::vector<std::uint64_t> one_big(681, 0);
  one_big[100] = kFormat;
  EXPECT_EQ(validate_size(0, 0, one_big), -E2BIG);
  EXPECT_EQ(validate_size(0, 0, std::vector<std::uint64_t>(681, 0)), 0);
}

// ---------------------------------------------------------------------- check_aux_event ---

TEST(CheckAuxEvent, AuxActionsNeedAnAuxLeader) {
  // Spec §9 checks 27 and 34.
  AttrBuffer none;
  EXPECT_EQ(check_aux_event(copied(none)), 0);
  AttrBuffer sample;
  sample.attr().sample_type = PERF_SAMPLE_AUX;
  EXPECT_EQ(check_aux_event(copied(sample)), 0) << "PERF_SAMPLE_AUX with size 0 is fine";
  sample.attr().aux_sample_size = 4096;
  EXPECT_EQ(check_aux_event(copied(sample)), -EINVAL);
  AttrBuffer pause;
  set_aux_action(pause.attr(), kAuxPause);
  EXPECT_EQ(check_aux_event(copied(pause)), -EINVAL);
  AttrBuffer resume;
  set_aux_action(resume.attr(), kAuxResume);
  EXPECT_EQ(check_aux_event(copied(resume)), -EINVAL);
  AttrBuffer start_paused;
  set_aux_action(start_paused.attr(), kAuxStartPaused);
  EXPECT_EQ(check_aux_event(copied(start_paused)), 0);
}

// ------------------------------------------------- the whole pipeline, kernel order ---

TEST(StandaloneOpen, TriviallyValidEventsOpen) {
  for (std::uint64_t config :
       {std::uint64_t{PERF_COUNT_SW_CPU_CLOCK}, std::uint64_t{PERF_COUNT_SW_TASK_CLOCK},
        std::uint64_t{PERF_COUNT_SW_DUMMY}, std::uint64_t{PERF_COUNT_SW_BPF_OUTPUT}}) {
    AttrBuffer buf;
    buf.attr().config = config;
    EXPECT_EQ(standalone(buf), 0) << config;
    EXPECT_EQ(standalone(buf, -1, 0), 0) << config;
  }
}

TEST(StandaloneOpen, FlagsAreCheckedBeforeTheAttr) {
  AttrBuffer buf;
  buf.attr().size = 60;
  EXPECT_EQ(standalone(buf, 0, -1, 1UL << 5), -EINVAL);
  EXPECT_EQ(buf.attr().size, 60U) << "no write-back: the attr was never read";
  EXPECT_EQ(standalone(buf), -E2BIG);
  EXPECT_EQ(buf.attr().size, kOurSize);
}

TEST(StandaloneOpen, OrderingMatchesTheKernel) {
  // Each pair of faults below was run against Linux 6.18; the first listed check wins.
  AttrBuffer overflow_then_clock;  // get_callchain_buffers before perf_event_set_clock
  overflow_then_clock.attr().sample_type = PERF_SAMPLE_CALLCHAIN;
  overflow_then_clock.attr().sample_max_stack = 200;
  overflow_then_clock.attr().use_clockid = 1;
  overflow_then_clock.attr().clockid = CLOCK_PROCESS_CPUTIME_ID;
  EXPECT_EQ(standalone(overflow_then_clock), -EOVERFLOW);

  AttrBuffer aux_then_clock;  // PMU capability checks before perf_event_set_clock
  aux_then_clock.attr().aux_output = 1;
  aux_then_clock.attr().use_clockid = 1;
  aux_then_clock.attr().clockid = CLOCK_PROCESS_CPUTIME_ID;
  EXPECT_EQ(standalone(aux_then_clock), -EOPNOTSUPP);

  AttrBuffer read_then_pmu;  // inherit + SAMPLE_READ before the PMU lookup
  read_then_pmu.attr().inherit = 1;
  read_then_pmu.attr().sample_type = PERF_SAMPLE_READ;
  read_then_pmu.attr().config = 20;
  EXPECT_EQ(standalone(read_then_pmu), -EINVAL);

  AttrBuffer cpu_then_pmu;  // cpu range before the PMU lookup
  cpu_then_pmu.attr().config = 20;
  EXPECT_EQ(standalone(cpu_then_pmu, 0, 5), -EINVAL);

  AttrBuffer size_then_type;  // perf_copy_attr's size check first
  size_then_type.attr().size = 60;
  size_then_type.attr().sample_type = 1ULL << 25;
  EXPECT_EQ(standalone(size_then_type), -E2BIG);

  AttrBuffer sigtrap_cpu_wide;
  sigtrap_cpu_wide.attr().sigtrap = 1;
  sigtrap_cpu_wide.attr().remove_on_exec = 1;
  EXPECT_EQ(standalone(sigtrap_cpu_wide, -1, 0), -EINVAL);
  EXPECT_EQ(standalone(sigtrap_cpu_wide, 0, -1), 0);
}

TEST(StandaloneOpen, SpecConformanceChecks31To35) {
  // 31: sample_stack_user 12 → EINVAL; 65528 OK; 65536 → EINVAL.
  for (const auto& [size, expected] :
       {std::pair<std::uint32_t, int>{12, -EINVAL}, {65528, 0}, {65536, -EINVAL}}) {
    AttrBuffer buf;
    buf.attr().sample_type = PERF_SAMPLE_STACK_USER;
    buf.attr().sample_stack_user = size;
    EXPECT_EQ(standalone(buf), expected) << size;
  }
  // 32: WEIGHT|WEIGHT_STRUCT, sample_type bit 25, read_format bit 5, unknown flag → EINVAL.
  AttrBuffer weights;
  weights.attr().sample_type = PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT;
  EXPECT_EQ(standalone(weights), -EINVAL);
  AttrBuffer bit25;
  bit25.attr().sample_type = 1ULL << 25;
  EXPECT_EQ(standalone(bit25), -EINVAL);
  AttrBuffer rf5;
  rf5.attr().read_format = 1ULL << 5;
  EXPECT_EQ(standalone(rf5), -EINVAL);
  AttrBuffer flag;
  EXPECT_EQ(standalone(flag, 0, -1, 1UL << 8), -EINVAL);
  // 33: size 60 → E2BIG; larger size with non-zero tail → E2BIG and size rewritten; size 0 OK.
  AttrBuffer small;
  small.attr().size = 60;
  EXPECT_EQ(standalone(small), -E2BIG);
  AttrBuffer tail;
  tail.attr().size = 200;
  tail.bytes[150] = 1;
  EXPECT_EQ(standalone(tail), -E2BIG);
  EXPECT_EQ(tail.attr().size, kOurSize);
  AttrBuffer zero;
  zero.attr().size = 0;
  EXPECT_EQ(standalone(zero), 0);
  // 34: BRANCH_STACK, aux_output, aux_start_paused on cpu-clock → EOPNOTSUPP; aux_pause → EINVAL.
  AttrBuffer branch;
  branch.attr().sample_type = PERF_SAMPLE_BRANCH_STACK;
  branch.attr().branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
  EXPECT_EQ(standalone(branch), -EOPNOTSUPP);
  AttrBuffer aux_output;
  aux_output.attr().aux_output = 1;
  EXPECT_EQ(standalone(aux_output), -EOPNOTSUPP);
  AttrBuffer start_paused;
  set_aux_action(start_paused.attr(), kAuxStartPaused);
  EXPECT_EQ(standalone(start_paused), -EOPNOTSUPP);
  AttrBuffer pause;
  set_aux_action(pause.attr(), kAuxPause);
  EXPECT_EQ(standalone(pause), -EINVAL);
  // 35: inherit + SAMPLE_READ without TID → EINVAL; with TID OK.
  AttrBuffer inherit_read;
  inherit_read.attr().inherit = 1;
  inherit_read.attr().sample_type = PERF_SAMPLE_READ;
  EXPECT_EQ(standalone(inherit_read), -EINVAL);
  inherit_read.attr().sample_type |= PERF_SAMPLE_TID;
  EXPECT_EQ(standalone(inherit_read), 0);
}

TEST(StandaloneOpen, OracleEdgeCases) {
  // kernel-oracle.md, "Open and attribute edge cases".
  AttrBuffer max_stack;
  max_stack.attr().sample_type = PERF_SAMPLE_CALLCHAIN;
  max_stack.attr().sample_max_stack = 200;
  EXPECT_EQ(standalone(max_stack), -EOVERFLOW);
  AttrBuffer freq;
  freq.attr().freq = 1;
  freq.attr().sample_freq = 100001;
  EXPECT_EQ(standalone(freq), -EINVAL);
  AttrBuffer period;
  period.attr().sample_period = 1ULL << 63;
  EXPECT_EQ(standalone(period), -EINVAL);
  AttrBuffer stack65;
  stack65.attr().sample_type = PERF_SAMPLE_STACK_USER;
  stack65.attr().sample_stack_user = 65;
  EXPECT_EQ(standalone(stack65), -EINVAL);
  AttrBuffer regs0;
  regs0.attr().sample_type = PERF_SAMPLE_REGS_USER;
  EXPECT_EQ(standalone(regs0), -EINVAL);
  AttrBuffer regs40;
  regs40.attr().sample_type = PERF_SAMPLE_REGS_USER;
  regs40.attr().sample_regs_user = 1ULL << 40;
  EXPECT_EQ(standalone(regs40), -EOPNOTSUPP);
  AttrBuffer regs_ds;
  regs_ds.attr().sample_type = PERF_SAMPLE_REGS_USER;
  regs_ds.attr().sample_regs_user = 1ULL << 12;
  EXPECT_EQ(standalone(regs_ds), -EINVAL);
  AttrBuffer sigtrap;
  sigtrap.attr().sigtrap = 1;
  EXPECT_EQ(standalone(sigtrap), -EINVAL);
  AttrBuffer aux_sample;
  aux_sample.attr().sample_type = PERF_SAMPLE_AUX;
  aux_sample.attr().aux_sample_size = 4096;
  EXPECT_EQ(standalone(aux_sample), -EINVAL);
}

TEST(HostLimits, AreSane) {
  const OpenLimits limits = host_limits();
  EXPECT_GE(limits.nr_cpus, 1);
  EXPECT_GT(limits.max_sample_rate, 0U);
  EXPECT_GT(limits.max_stack, 0U);
  EXPECT_GE(possible_cpus(), 1);
}

}  // namespace
}  // namespace userperf::abi
