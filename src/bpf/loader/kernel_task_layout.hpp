// The task_struct layout of bpf_get_current_task's synthetic task (isa/kernel_task_layout.hpp),
// read from a kernel's BTF with the member search CO-RE relocations use, so a relocated program
// reads each field at the offset the synthetic task keeps it at.
#pragma once

#include "bpf/isa/kernel_task_layout.hpp"
#include "bpf/loader/core_apply.hpp"
#include "support/expected.hpp"

namespace userperf::bpf::loader {

// EINVAL when the BTF has no struct task_struct, or a member has a size the synthetic task cannot
// fill (KernelTaskLayout::consistent). A member the kernel lacks is left absent (size 0).
Expected<KernelTaskLayout> read_kernel_task_layout(const BtfHandle& kernel);

}  // namespace userperf::bpf::loader
