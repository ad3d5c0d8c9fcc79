// Copies to and from caller-supplied pointers without trusting them: a bad address gives false
// (EFAULT), never a fault. Used where the kernel would use copy_{from,to}_user on the syscall side.
#pragma once

#include <cstddef>

namespace userperf::support {

bool read_user(const void* src, void* dst, std::size_t len);
bool write_user(void* dst, const void* src, std::size_t len);
// Copies a NUL-terminated string of at most size bytes, NUL included (a longer string is cut and
// terminated). Returns the bytes copied with the NUL, or -EFAULT when a byte before the NUL is
// unreadable (dst then holds garbage: the caller zeroes it, as bpf_probe_read_user_str does).
long read_user_string(const void* src, char* dst, std::size_t size);

}  // namespace userperf::support
