#include "support/user_memory.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace userperf::support {

namespace {
constexpr std::size_t kPage = 4096;
}  // namespace

// process_vm_readv/writev on our own pid report EFAULT for unmapped ranges instead of faulting.
bool read_user(const void* src, void* dst, std::size_t len) {
  if (len == 0) return true;
  iovec local{dst, len};
  iovec remote{const_cast<void*>(src), len};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
}

long read_user_string(const void* src, char* dst, std::size_t size) {
  if (size == 0) return 0;
  const auto start = reinterpret_cast<std::uintptr_t>(src);
  std::size_t done = 0;
  // Chunks that never cross a page boundary: a readable page is read whole or not at all.
  while (done < size) {
    const std::uintptr_t at = start + done;
    const std::size_t to_page_end = kPage - (at % kPage);
    const std::size_t chunk = std::min(size - done, to_page_end);
    if (!read_user(reinterpret_cast<const void*>(at), dst + done, chunk)) return -EFAULT;
    const void* nul = std::memchr(dst + done, '\0', chunk);
    if (nul != nullptr) return static_cast<const char*>(nul) - dst + 1;
    done += chunk;
  }
  dst[size - 1] = '\0';  // truncated, as strncpy_from_user_nofault
  return static_cast<long>(size);
}

bool write_user(void* dst, const void* src, std::size_t len) {
  if (len == 0) return true;
  iovec local{const_cast<void*>(src), len};
  iovec remote{dst, len};
  return process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
}

}  // namespace userperf::support
