// bpf_get_current_task's answer: the kernel-half address of a SYNTHETIC task_struct of the calling
// thread, and the kernel-memory reads (bpf_probe_read_kernel, _str, and the x86-64 legacy
// bpf_probe_read(_str) above TASK_SIZE) that reach it. Nothing is stored: a read finds the
// modelled member its address falls in and gathers the value then (signal-safe system calls, the
// run's registers), at the offset the kernel's BTF gives (KernelTaskLayout, from the image).
//
// The synthetic kernel address space, one 1 MiB slot per task id from kTaskArena:
//   slot + 0        the task_struct of id (task_size bytes)
//   slot + 0x10000  its kernel stack (kThreadSize bytes), struct pt_regs at its top
//   slot + 0x20000  the process's mm_struct (the group leader's slot only)
//   slot + 0x30000  bpf_find_vma's vm_area_struct of the mapping found (the calling thread's slot),
//   slot + 0x40000  its struct file (file mappings only),
//   slot + 0x50000  that file's dentry,
//   slot + 0x60000  and the dentry's name (d_name.name: the basename, NUL-terminated)
// Modelled members (anything else in the kernel half faults, -EFAULT; below it, -ERANGE):
//   the calling thread:  pid, tgid, comm, thread.fsbase, stack, real_parent, group_leader, mm
//   its group leader (when another thread): pid, tgid, real_parent, group_leader, mm
//   the mm_struct: start_stack, arg_start, arg_end (/proc/self/stat's, read once per process)
//   its parent process (real_parent):       tgid
//   its stack's pt_regs: the sampled user registers (the run context's)
//   while a bpf_find_vma callback may run (FoundVma): the vma's vm_start, vm_end, vm_flags,
//     vm_pgoff, vm_file (0 for an anonymous mapping); the file's f_path.dentry; the dentry's
//     d_iname (d_shortname.string since 6.14: the basename truncated to DNAME_INLINE_LEN - 1
//     bytes, NUL-padded) and d_name.name; the name's bytes up to and with its NUL
#pragma once

#include <cstdint>

#include "bpf/isa/helper_call.hpp"
#include "bpf/isa/kernel_task_layout.hpp"

namespace userperf::bpf {

inline constexpr std::uint64_t kTaskArena = 0xffff888000000000ull;  // x86-64's direct map
inline constexpr std::uint64_t kTaskSlotShift = 20;
inline constexpr std::uint64_t kTaskStackOffset = 0x10000;
inline constexpr std::uint64_t kTaskMmOffset = 0x20000;
inline constexpr std::uint64_t kTaskVmaOffset = 0x30000;
inline constexpr std::uint64_t kTaskFileOffset = 0x40000;
inline constexpr std::uint64_t kTaskDentryOffset = 0x50000;
inline constexpr std::uint64_t kTaskNameOffset = 0x60000;
inline constexpr std::uint64_t kMaxVmaName = 256;  // NAME_MAX + 1
// x86-64's THREAD_SIZE without KASAN (PAGE_SIZE << 2): where programs look for pt_regs.
inline constexpr std::uint64_t kThreadSize = 16384;
inline constexpr std::uint64_t kPtRegsSize = 21 * 8;  // x86-64 struct pt_regs

std::uint64_t synthetic_task_address(std::uint32_t task_id);

// The mapping bpf_find_vma found (perf/find_vma.hpp), kept in the run's context while its
// callback may read it.
struct FoundVma {
  // `name` is left unset (only a file mapping's is read): every overflow's run context has one,
  // and zeroing 256 bytes per run would cost the overflow path for nothing.
  FoundVma() {}
  bool valid = false;
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::uint64_t flags = 0;  // VM_READ | VM_WRITE | VM_EXEC | VM_SHARED from the permissions
  std::uint64_t pgoff = 0;  // the file offset in pages
  bool has_file = false;
  char name[kMaxVmaName];  // has_file: the file's basename, NUL-terminated
};

// Who reads: the layout and the sampled registers (perf_event_x86_regs order) of the run, and the
// mapping bpf_find_vma found in it (nullptr: none).
struct TaskReadContext {
  const KernelTaskLayout* layout = nullptr;
  const std::uint64_t* regs = nullptr;
  const FoundVma* vma = nullptr;
};

// copy_from_kernel_nofault of the synthetic address space: 0, or -ERANGE for an address the x86-64
// kernel does not read as kernel memory (user half, non-canonical), -EFAULT for one no modelled
// member covers. SIGNAL-SAFE.
int read_synthetic_kernel(const TaskReadContext& ctx, std::uint64_t addr, void* dst,
                          std::uint64_t size);
// strncpy_from_kernel_nofault: the bytes up to and with the first NUL, at most size (all size
// bytes read, the last then replaced by a NUL): their count; -ERANGE/-EFAULT as above when a byte
// before the NUL is not readable.
long read_synthetic_kernel_string(const TaskReadContext& ctx, std::uint64_t addr, char* dst,
                                  std::uint64_t size);

}  // namespace userperf::bpf
