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
  if (!layout.consistent()) {
    return make_error(EINVAL,
                      "the kernel's task_struct (" + std::to_string(*size) +
                          " bytes) has members of sizes the synthetic task of "
                          "bpf_get_current_task does not model (pid/tgid 4, comm 16, pointers 8)");
  }
  return layout;
}

}  // namespace userperf::bpf::loader
