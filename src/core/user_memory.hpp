// Copies to and from caller-supplied pointers without trusting them: a bad address gives false
// (EFAULT), never a fault. Used where the kernel would use copy_{from,to}_user on the syscall side.
#pragma once

#include <cstddef>

namespace userperf::core {

bool read_user(const void* src, void* dst, std::size_t len);
bool write_user(void* dst, const void* src, std::size_t len);

}  // namespace userperf::core
