#include "core/user_memory.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

namespace userperf::core {

// process_vm_readv/writev on our own pid report EFAULT for unmapped ranges instead of faulting.
bool read_user(const void* src, void* dst, std::size_t len) {
  if (len == 0) return true;
  iovec local{dst, len};
  iovec remote{const_cast<void*>(src), len};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
}

bool write_user(void* dst, const void* src, std::size_t len) {
  if (len == 0) return true;
  iovec local{const_cast<void*>(src), len};
  iovec remote{dst, len};
  return process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
}

}  // namespace userperf::core
