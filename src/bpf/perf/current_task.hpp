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
// Modelled members (anything else in the kernel half faults, -EFAULT; below it, -ERANGE):
//   the calling thread:  pid, tgid, comm, thread.fsbase, stack, real_parent, group_leader, mm
//   its group leader (when another thread): pid, tgid, real_parent, group_leader, mm
//   the mm_struct: start_stack, arg_start, arg_end (/proc/self/stat's, read once per process)
//   its parent process (real_parent):       tgid
//   its stack's pt_regs: the sampled user registers (the run context's)
#pragma once

#include <cstdint>

#include "bpf/isa/helper_call.hpp"
#include "bpf/isa/kernel_task_layout.hpp"

namespace userperf::bpf {

inline constexpr std::uint64_t kTaskArena = 0xffff888000000000ull;  // x86-64's direct map
inline constexpr std::uint64_t kTaskSlotShift = 20;
inline constexpr std::uint64_t kTaskStackOffset = 0x10000;
inline constexpr std::uint64_t kTaskMmOffset = 0x20000;
// x86-64's THREAD_SIZE without KASAN (PAGE_SIZE << 2): where programs look for pt_regs.
inline constexpr std::uint64_t kThreadSize = 16384;
inline constexpr std::uint64_t kPtRegsSize = 21 * 8;  // x86-64 struct pt_regs

std::uint64_t synthetic_task_address(std::uint32_t task_id);

// Who reads: the layout and the sampled registers (perf_event_x86_regs order) of the run.
struct TaskReadContext {
  const KernelTaskLayout* layout = nullptr;
  const std::uint64_t* regs = nullptr;
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
