// The kernel's names for fixed-width integers (include/linux/types.h), which RFC 9669 uses too,
// for the files that follow kernel code closely: the verifier's range arithmetic
// (scalar_bounds.cpp, scalar_branches.cpp) and the helpers, whose arguments and results are u64.
#pragma once

#include <cstdint>

namespace userperf::bpf {

using u64 = std::uint64_t;
using s64 = std::int64_t;
using u32 = std::uint32_t;
using s32 = std::int32_t;

}  // namespace userperf::bpf
