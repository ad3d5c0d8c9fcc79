// The BTF prototype of each function of a linked program, as the verifier needs it to verify a
// global function on its own (the kernel's btf_prepare_func_args): its linkage, whether it returns
// a scalar, and what each argument is (a scalar, the context, sized memory).
#pragma once

#include <cstdint>
#include <vector>

#include "bpf/isa/program_image.hpp"
#include "bpf/loader/core_apply.hpp"
#include "bpf/loader/program_linker.hpp"

namespace userperf::bpf::loader {

// The functions of `linked` that have a BTF FUNC type of their name (clang -g gives each one),
// in `linked`'s order. `prog_type` decides which struct is the context.
std::vector<BtfFunc> describe_btf_funcs(const BtfHandle& btf, const LinkedProgram& linked,
                                        std::uint32_t prog_type);

}  // namespace userperf::bpf::loader
