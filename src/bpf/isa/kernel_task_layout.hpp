// Where the running kernel keeps the task_struct fields that bpf_get_current_task's synthetic task
// models (perf/current_task.hpp): byte offsets and sizes from the kernel's BTF, computed by the
// loader (loader/kernel_task_layout.hpp, libbpf there) and carried in the ObjectImage, so the
// agent, which links no ELF or BTF library, gets them with the program (isa/image_codec).
#pragma once

#include <array>
#include <cstdint>

namespace userperf::bpf {

// A member's place in its struct; size 0: the kernel has no such member (reads of it fault).
struct KernelField {
  std::uint32_t offset = 0;
  std::uint32_t size = 0;
  bool operator==(const KernelField&) const = default;
};

struct KernelTaskLayout {
  // False: no kernel BTF was read (a program calling bpf_get_current_task does not load).
  bool present = false;
  std::uint32_t task_size = 0;  // sizeof(struct task_struct)
  KernelField pid;              // int: the thread id
  KernelField tgid;             // int: the process id
  KernelField comm;             // char[16]
  KernelField real_parent;      // struct task_struct *
  KernelField group_leader;     // struct task_struct *
  KernelField stack;            // void *: the kernel stack, pt_regs at its top
  KernelField thread_fsbase;    // thread.fsbase (x86-64): unsigned long
  KernelField mm;               // struct mm_struct *
  std::uint32_t mm_size = 0;    // sizeof(struct mm_struct)
  KernelField mm_start_stack;   // mm_struct's unsigned long members
  KernelField mm_arg_start;
  KernelField mm_arg_end;
  // bpf_find_vma's synthetic vm_area_struct, its struct file and dentry (absent: size 0).
  std::uint32_t vma_size = 0;  // sizeof(struct vm_area_struct)
  KernelField vma_start;       // unsigned long vm_start, vm_end, vm_flags, vm_pgoff
  KernelField vma_end;
  KernelField vma_flags;
  KernelField vma_pgoff;
  KernelField vma_file;           // struct file *
  std::uint32_t file_size = 0;    // sizeof(struct file)
  KernelField file_dentry;        // f_path.dentry: struct dentry *
  std::uint32_t dentry_size = 0;  // sizeof(struct dentry)
  KernelField dentry_iname;       // d_iname, or d_shortname.string (6.14+): DNAME_INLINE_LEN bytes
  KernelField dentry_name;        // d_name.name: const unsigned char *
  bool operator==(const KernelTaskLayout&) const = default;

  // Every member, in one order (the image codec writes and reads them so).
  std::array<KernelField*, 19> fields() {
    return {&pid,        &tgid,          &comm,         &real_parent,    &group_leader,
            &stack,      &thread_fsbase, &mm,           &mm_start_stack, &mm_arg_start,
            &mm_arg_end, &vma_start,     &vma_end,      &vma_flags,      &vma_pgoff,
            &vma_file,   &file_dentry,   &dentry_iname, &dentry_name};
  }
  // DNAME_INLINE_LEN: 32 before Linux 6.14 (d_iname), 40 since (d_shortname).
  static constexpr std::uint32_t kMinInlineName = 32;
  static constexpr std::uint32_t kMaxInlineName = 64;

  // The sizes the synthetic task can fill (4-byte ids, 16-byte comm, 8-byte pointers and
  // fsbase, absent members as size 0) and every member inside a task (an mm_struct) of at most
  // kMaxTaskSize bytes: what a decoder accepts and the runtime relies on.
  static constexpr std::uint32_t kMaxTaskSize = 0x10000;
  bool consistent() const {
    if (!present) return *this == KernelTaskLayout{};
    if (task_size == 0 || task_size > kMaxTaskSize || mm_size > kMaxTaskSize ||
        vma_size > kMaxTaskSize || file_size > kMaxTaskSize || dentry_size > kMaxTaskSize) {
      return false;
    }
    const bool iname_ok = dentry_iname.size == 0
                              ? dentry_iname.offset == 0
                              : dentry_iname.size >= kMinInlineName &&
                                    dentry_iname.size <= kMaxInlineName &&
                                    dentry_iname.size <= dentry_size &&
                                    dentry_iname.offset <= dentry_size - dentry_iname.size;
    const auto fits_in = [](std::uint32_t whole, const KernelField& f, std::uint32_t size) {
      return f.size == 0 ? f.offset == 0
                         : f.size == size && size <= whole && f.offset <= whole - size;
    };
    const auto fits = [&](const KernelField& f, std::uint32_t size) {
      return fits_in(task_size, f, size);
    };
    return fits(pid, 4) && fits(tgid, 4) && fits(comm, 16) && fits(real_parent, 8) &&
           fits(group_leader, 8) && fits(stack, 8) && fits(thread_fsbase, 8) && fits(mm, 8) &&
           fits_in(mm_size, mm_start_stack, 8) && fits_in(mm_size, mm_arg_start, 8) &&
           fits_in(mm_size, mm_arg_end, 8) && fits_in(vma_size, vma_start, 8) &&
           fits_in(vma_size, vma_end, 8) && fits_in(vma_size, vma_flags, 8) &&
           fits_in(vma_size, vma_pgoff, 8) && fits_in(vma_size, vma_file, 8) &&
           fits_in(file_size, file_dentry, 8) && fits_in(dentry_size, dentry_name, 8) && iname_ok;
  }
};

}  // namespace userperf::bpf
