// The kernel struct types the verifier walks through BTF-typed pointers
// (isa/kernel_btf_types.hpp), read from a kernel's BTF with libbpf (the BtfHandle CO-RE uses).
#pragma once

#include "bpf/isa/kernel_btf_types.hpp"
#include "bpf/loader/core_apply.hpp"
#include "support/expected.hpp"

namespace userperf::bpf::loader {

// task_struct and vm_area_struct and what they reach within KernelBtfTypes::kMaxPointerHops
// pointer dereferences. EINVAL when the BTF has no struct task_struct.
Expected<KernelBtfTypes> read_kernel_btf_types(const BtfHandle& kernel);

}  // namespace userperf::bpf::loader
