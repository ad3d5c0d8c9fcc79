// SIGNAL-SAFE: see current_task.hpp. The only system calls are prctl(PR_GET_NAME),
// arch_prctl(ARCH_GET_FS) and getppid, made when a read covers the member that needs them, and
// open/read/close of /proc/self/stat once per process for the mm members.
#include "bpf/perf/current_task.hpp"

#include <asm/prctl.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "bpf/perf/perf_event_ctx.hpp"
#include "support/task_ids.hpp"

namespace userperf::bpf {

namespace {

// x86-64 (4-level paging): copy_from_kernel_nofault_allowed refuses the user half with its guard
// page (TASK_SIZE_MAX + PAGE_SIZE) and non-canonical addresses, -ERANGE.
constexpr std::uint64_t kKernelHalf = 0xffff800000000000ull;
constexpr std::uint64_t kMaxTaskId = 1ull << 22;  // PID_MAX_LIMIT on 64-bit

// Which task a slot holds, as the calling thread sees it.
enum class Whose : std::uint8_t { kSelf = 1, kLeader = 2, kParent = 4 };

enum class Value : std::uint8_t {
  kTid,
  kPid,
  kPpid,
  kComm,
  kFsBase,
  kStack,
  kParentTask,
  kLeaderTask,
  kMm,
  kStartStack,
  kArgStart,
  kArgEnd
};

// One modelled member: where the layout keeps it, for which tasks, what it holds.
struct Modelled {
  KernelField KernelTaskLayout::*field;
  std::uint8_t whose;  // Whose bits
  Value value;
};

constexpr std::uint8_t bits(Whose w) {
  return static_cast<std::uint8_t>(w);
}
constexpr std::uint8_t kSelfOrLeader = bits(Whose::kSelf) | bits(Whose::kLeader);

constexpr Modelled kModelled[] = {
    {&KernelTaskLayout::pid, bits(Whose::kSelf), Value::kTid},
    {&KernelTaskLayout::pid, bits(Whose::kLeader), Value::kPid},
    {&KernelTaskLayout::tgid, kSelfOrLeader, Value::kPid},
    {&KernelTaskLayout::tgid, bits(Whose::kParent), Value::kPpid},
    {&KernelTaskLayout::comm, bits(Whose::kSelf), Value::kComm},
    {&KernelTaskLayout::thread_fsbase, bits(Whose::kSelf), Value::kFsBase},
    {&KernelTaskLayout::stack, bits(Whose::kSelf), Value::kStack},
    {&KernelTaskLayout::real_parent, kSelfOrLeader, Value::kParentTask},
    {&KernelTaskLayout::group_leader, kSelfOrLeader, Value::kLeaderTask},
    {&KernelTaskLayout::mm, kSelfOrLeader, Value::kMm},
};

// The process's mm_struct (in the group leader's slot): members by the same table shape, whose 0
// (the mm is no task: every reader of the process sees the same one).
constexpr Modelled kMmModelled[] = {
    {&KernelTaskLayout::mm_start_stack, 0, Value::kStartStack},
    {&KernelTaskLayout::mm_arg_start, 0, Value::kArgStart},
    {&KernelTaskLayout::mm_arg_end, 0, Value::kArgEnd},
};

// startstack, arg_start and arg_end of /proc/self/stat (fields 28, 48, 49), set at exec: read once
// per process with open/read/close and parsed in place (no allocation), then kept. A fork child
// shares the values (its mm is a copy); an exec starts a new process image and a new cache.
struct MmValues {
  std::uint64_t start_stack = 0;
  std::uint64_t arg_start = 0;
  std::uint64_t arg_end = 0;
};
std::atomic<int> g_mm_state{0};  // 0: not read, 1: read, 2: unreadable
MmValues g_mm;

bool read_mm_values(MmValues& out) {
  char line[2048];
  const int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = read(fd, line, sizeof line - 1);
  close(fd);
  if (n <= 0) return false;
  line[n] = '\0';
  // Fields after the comm, which may hold spaces and parentheses: from the last ')'.
  const char* p = std::strrchr(line, ')');
  if (p == nullptr) return false;
  int field = 2;
  std::uint64_t value = 0;
  bool in_number = false;
  for (++p; *p != '\0'; ++p) {
    if (*p == ' ' || *p == '\n') {
      if (in_number) {
        if (field == 28) out.start_stack = value;
        if (field == 48) out.arg_start = value;
        if (field == 49) {
          out.arg_end = value;
          return true;
        }
      }
      in_number = false;
      continue;
    }
    if (!in_number) {
      ++field;
      value = 0;
      in_number = true;
    }
    value = *p >= '0' && *p <= '9' ? value * 10 + static_cast<std::uint64_t>(*p - '0') : value;
  }
  return false;
}

const MmValues* mm_values() {
  int state = g_mm_state.load(std::memory_order_acquire);
  if (state == 0) {
    MmValues values;
    const bool ok = read_mm_values(values);
    if (ok) g_mm = values;  // every reader computes the same values: a race writes them twice
    state = ok ? 1 : 2;
    g_mm_state.store(state, std::memory_order_release);
  }
  return state == 1 ? &g_mm : nullptr;
}

// The bytes of the one modelled member that covers an address.
struct Member {
  std::uint64_t begin = 0;
  std::uint64_t size = 0;
  unsigned char bytes[kMaxVmaName] = {};
};

template <class T>
void put(Member& m, T value) {
  static_assert(sizeof(T) <= sizeof m.bytes);
  std::memcpy(m.bytes, &value, sizeof value);
}

void fill(Member& m, Value value) {
  const auto pid = static_cast<std::uint32_t>(support::current_pid());
  switch (value) {
    case Value::kTid:
      put(m, static_cast<std::int32_t>(support::current_tid()));
      break;
    case Value::kPid:
      put(m, static_cast<std::int32_t>(pid));
      break;
    case Value::kPpid:
      put(m, static_cast<std::int32_t>(getppid()));
      break;
    case Value::kComm:
      prctl(PR_GET_NAME, m.bytes);  // 16 bytes, NUL-padded
      break;
    case Value::kFsBase: {
      unsigned long base = 0;
      syscall(SYS_arch_prctl, ARCH_GET_FS, &base);
      put(m, static_cast<std::uint64_t>(base));
      break;
    }
    case Value::kStack:
      put(m, synthetic_task_address(static_cast<std::uint32_t>(support::current_tid())) +
                 kTaskStackOffset);
      break;
    case Value::kParentTask: {
      const pid_t ppid = getppid();  // 0: the parent is outside this pid namespace
      put(m, ppid > 0 ? synthetic_task_address(static_cast<std::uint32_t>(ppid)) : 0);
      break;
    }
    case Value::kLeaderTask:
      put(m, synthetic_task_address(pid));
      break;
    case Value::kMm:
      put(m, synthetic_task_address(pid) + kTaskMmOffset);
      break;
    case Value::kStartStack:
    case Value::kArgStart:
    case Value::kArgEnd: {
      const MmValues* mm = mm_values();  // member_at checked it could be read
      const std::uint64_t v = mm == nullptr                 ? 0
                              : value == Value::kStartStack ? mm->start_stack
                              : value == Value::kArgStart   ? mm->arg_start
                                                            : mm->arg_end;
      put(m, v);
      break;
    }
  }
}

// The first entry of `table` whose member covers `offset` of an object at `object`.
template <std::size_t N>
bool modelled_at(const KernelTaskLayout& layout, const Modelled (&table)[N], std::uint8_t whose,
                 std::uint64_t object, std::uint64_t offset, Member& out) {
  for (const Modelled& m : table) {
    const KernelField& field = layout.*m.field;
    if ((m.whose != 0 && (m.whose & whose) == 0) || field.size == 0) continue;
    if (offset < field.offset || offset - field.offset >= field.size) continue;
    out.begin = object + field.offset;
    out.size = field.size;
    fill(out, m.value);
    return true;
  }
  return false;
}

// pt_regs at the top of the calling thread's stack: the run's registers in uapi order, through
// the same map the verifier's ctx rewriting uses for bpf_perf_event_data's regs.
void fill_pt_regs(Member& m, const std::uint64_t* regs) {
  const PerfEventCtxLayout& ctx = perf_event_ctx_layout();
  for (std::size_t i = 0; i < kPtRegsSize / 8; ++i) {
    const std::uint64_t value = ctx.regs[i] < 0 || regs == nullptr ? 0 : regs[ctx.regs[i] / 8];
    std::memcpy(m.bytes + i * 8, &value, 8);
  }
}

// One 8-byte value or byte string as a member.
bool value_member(Member& m, std::uint64_t begin, const KernelField& field, std::uint64_t offset,
                  std::uint64_t value) {
  if (field.size == 0 || offset < field.offset || offset - field.offset >= field.size) return false;
  m.begin = begin + field.offset;
  m.size = field.size;
  put(m, value);
  return true;
}

// bpf_find_vma's vm_area_struct, file, dentry and name in the calling thread's slot.
bool vma_member_at(const TaskReadContext& ctx, std::uint64_t slot, std::uint64_t offset,
                   Member& out) {
  const FoundVma* vma = ctx.vma;
  if (vma == nullptr || !vma->valid) return false;
  const KernelTaskLayout& l = *ctx.layout;
  const auto in = [&](std::uint64_t base, std::uint64_t size) {
    return offset >= base && offset - base < size;
  };
  if (in(kTaskVmaOffset, l.vma_size)) {
    const std::uint64_t base = slot + kTaskVmaOffset;
    const std::uint64_t off = offset - kTaskVmaOffset;
    return value_member(out, base, l.vma_start, off, vma->start) ||
           value_member(out, base, l.vma_end, off, vma->end) ||
           value_member(out, base, l.vma_flags, off, vma->flags) ||
           value_member(out, base, l.vma_pgoff, off, vma->pgoff) ||
           value_member(out, base, l.vma_file, off, vma->has_file ? slot + kTaskFileOffset : 0);
  }
  if (!vma->has_file) return false;
  if (in(kTaskFileOffset, l.file_size)) {
    return value_member(out, slot + kTaskFileOffset, l.file_dentry, offset - kTaskFileOffset,
                        slot + kTaskDentryOffset);
  }
  if (in(kTaskDentryOffset, l.dentry_size)) {
    const std::uint64_t off = offset - kTaskDentryOffset;
    if (value_member(out, slot + kTaskDentryOffset, l.dentry_name, off, slot + kTaskNameOffset)) {
      return true;
    }
    const KernelField& iname = l.dentry_iname;
    if (iname.size == 0 || off < iname.offset || off - iname.offset >= iname.size) return false;
    out.begin = slot + kTaskDentryOffset + iname.offset;
    out.size = iname.size;
    std::memset(out.bytes, 0, sizeof out.bytes);
    std::memcpy(out.bytes, vma->name,
                std::min<std::size_t>(std::strlen(vma->name), iname.size - 1));
    return true;
  }
  if (in(kTaskNameOffset, kMaxVmaName)) {
    const std::size_t len = std::strlen(vma->name) + 1;
    if (offset - kTaskNameOffset >= len) return false;
    out.begin = slot + kTaskNameOffset;
    out.size = len;
    std::memcpy(out.bytes, vma->name, len);
    return true;
  }
  return false;
}

bool member_at(const TaskReadContext& ctx, std::uint64_t addr, Member& out) {
  if (addr < kTaskArena || (addr - kTaskArena) >> kTaskSlotShift >= kMaxTaskId) return false;
  const auto id = static_cast<std::uint32_t>((addr - kTaskArena) >> kTaskSlotShift);
  const std::uint64_t slot = synthetic_task_address(id);
  const std::uint64_t offset = addr - slot;
  const auto tid = static_cast<std::uint32_t>(support::current_tid());
  const std::uint64_t pt_regs = kTaskStackOffset + kThreadSize - kPtRegsSize;
  if (id == tid && offset >= pt_regs && offset < pt_regs + kPtRegsSize) {
    out.begin = slot + pt_regs;
    out.size = kPtRegsSize;
    fill_pt_regs(out, ctx.regs);
    return true;
  }
  if (ctx.layout == nullptr || !ctx.layout->present) return false;
  const KernelTaskLayout& layout = *ctx.layout;
  const auto pid = static_cast<std::uint32_t>(support::current_pid());
  if (id == pid && offset >= kTaskMmOffset && offset - kTaskMmOffset < layout.mm_size) {
    if (mm_values() == nullptr) return false;  // /proc/self/stat unreadable: the members fault
    return modelled_at(layout, kMmModelled, 0, slot + kTaskMmOffset, offset - kTaskMmOffset, out);
  }
  if (id == tid && offset >= kTaskVmaOffset) return vma_member_at(ctx, slot, offset, out);
  if (offset >= layout.task_size) return false;
  std::uint8_t whose = 0;
  if (id == tid) {
    whose = bits(Whose::kSelf);
  } else if (id == pid) {
    whose = bits(Whose::kLeader);
  } else if (id == static_cast<std::uint32_t>(getppid())) {
    whose = bits(Whose::kParent);
  }
  return whose != 0 && modelled_at(layout, kModelled, whose, slot, offset, out);
}

// The kernel's refusal before any access: the user half, its guard page, non-canonical.
bool kernel_address(std::uint64_t addr) {
  return addr >= kKernelHalf;
}

}  // namespace

std::uint64_t synthetic_task_address(std::uint32_t task_id) {
  return kTaskArena + (std::uint64_t{task_id} << kTaskSlotShift);
}

int read_synthetic_kernel(const TaskReadContext& ctx, std::uint64_t addr, void* dst,
                          std::uint64_t size) {
  if (size == 0) return 0;
  if (!kernel_address(addr)) return -ERANGE;
  auto* out = static_cast<unsigned char*>(dst);
  std::uint64_t done = 0;
  Member member;
  while (done < size) {
    const std::uint64_t at = addr + done;
    if (at < addr || !member_at(ctx, at, member)) return -EFAULT;  // wrapped, or not modelled
    const std::uint64_t n = std::min(size - done, member.begin + member.size - at);
    std::memcpy(out + done, member.bytes + (at - member.begin), n);
    done += n;
  }
  return 0;
}

long read_synthetic_kernel_string(const TaskReadContext& ctx, std::uint64_t addr, char* dst,
                                  std::uint64_t size) {
  if (size == 0) return 0;
  if (!kernel_address(addr)) return -ERANGE;
  std::uint64_t done = 0;
  Member member;
  // As the kernel, the size-th byte is read too (then replaced by the NUL).
  while (done < size) {
    const std::uint64_t at = addr + done;
    if (at < addr || !member_at(ctx, at, member)) return -EFAULT;
    const std::uint64_t end = std::min(size, member.begin + member.size - addr);
    for (; done < end; ++done) {
      dst[done] = static_cast<char>(member.bytes[addr + done - member.begin]);
      if (dst[done] == '\0') return static_cast<long>(done + 1);
    }
  }
  dst[size - 1] = '\0';
  return static_cast<long>(size);
}

}  // namespace userperf::bpf
