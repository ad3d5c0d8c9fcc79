// bpf_trace_printk's formatting: the kernel's subset of printf conversions (%d %i %u %x %X %c %s
// %p %% with the l/ll length modifiers, no width or flags other than those), at most three
// arguments, %s read through the non-faulting reader. SIGNAL-SAFE: no allocation, no stdio.
#pragma once

#include <cstddef>
#include <cstdint>

namespace userperf::bpf {

// Formats `fmt` (NUL-terminated within fmt_size) into out[0..out_size) with args; returns the
// length written (NUL excluded), or -EINVAL for a bad format (unknown conversion, more than three
// arguments, no NUL within fmt_size), as bpf_trace_printk's checks.
long format_trace_printk(const char* fmt, std::uint32_t fmt_size, const std::uint64_t args[3],
                         char* out, std::size_t out_size);

}  // namespace userperf::bpf
