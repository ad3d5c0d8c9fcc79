#include "bpf/loader/kernel_task_layout.hpp"

#include <cerrno>
#include <string>
#include <vector>

namespace userperf::bpf::loader {

Expected<KernelTaskLayout> read_kernel_task_layout(const BtfHandle& kernel) {
  KernelTaskLayout layout;
  const auto size = struct_size(kernel, "task_struct");
  if (!size) return make_error(EINVAL, "the kernel's BTF has no struct task_struct");
  layout.present = true;
  layout.task_size = *size;
  const auto field = [&](KernelField& out, std::vector<std::string> path,
                         const char* owner = "task_struct") {
    if (auto found = find_struct_field(kernel, owner, path)) {
      out = KernelField{found->offset, found->size};
    }
  };
  field(layout.pid, {"pid"});
  field(layout.tgid, {"tgid"});
  field(layout.comm, {"comm"});
  field(layout.real_parent, {"real_parent"});
  field(layout.group_leader, {"group_leader"});
  field(layout.stack, {"stack"});
  field(layout.thread_fsbase, {"thread", "fsbase"});
  field(layout.mm, {"mm"});
  if (const auto mm_size = struct_size(kernel, "mm_struct")) {
    layout.mm_size = *mm_size;
    field(layout.mm_start_stack, {"start_stack"}, "mm_struct");
    field(layout.mm_arg_start, {"arg_start"}, "mm_struct");
    field(layout.mm_arg_end, {"arg_end"}, "mm_struct");
  }
  // bpf_find_vma's vm_area_struct, struct file and dentry.
  if (const auto vma_size = struct_size(kernel, "vm_area_struct")) {
    layout.vma_size = *vma_size;
    field(layout.vma_start, {"vm_start"}, "vm_area_struct");
    field(layout.vma_end, {"vm_end"}, "vm_area_struct");
    field(layout.vma_flags, {"vm_flags"}, "vm_area_struct");
    field(layout.vma_pgoff, {"vm_pgoff"}, "vm_area_struct");
    field(layout.vma_file, {"vm_file"}, "vm_area_struct");
  }
  if (const auto file_size = struct_size(kernel, "file")) {
    layout.file_size = *file_size;
    field(layout.file_dentry, {"f_path", "dentry"}, "file");
  }
  if (const auto dentry_size = struct_size(kernel, "dentry")) {
    layout.dentry_size = *dentry_size;
    field(layout.dentry_iname, {"d_iname"}, "dentry");
    if (layout.dentry_iname.size == 0)
      field(layout.dentry_iname, {"d_shortname", "string"}, "dentry");
    field(layout.dentry_name, {"d_name", "name"}, "dentry");
  }
  if (!layout.consistent()) {
    return make_error(EINVAL,
                      "the kernel's task_struct (" + std::to_string(*size) +
                          " bytes) has members of sizes the synthetic task of "
                          "bpf_get_current_task does not model (pid/tgid 4, comm 16, pointers 8)");
  }
  return layout;
}

}  // namespace userperf::bpf::loader
