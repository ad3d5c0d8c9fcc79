#include "support/process_barrier.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

#include "support/fork_sequence.hpp"

namespace userperf::support {

namespace {

constinit std::atomic<bool> g_available{false};

long membarrier(int cmd) {
  return syscall(SYS_membarrier, cmd, 0, 0);
}

// USERPERF_NO_PROCESS_BARRIER=1 forces the locked fallback (to test it, or to rule it out).
void register_barrier() {
  const char* off = std::getenv("USERPERF_NO_PROCESS_BARRIER");
  const bool disabled = off != nullptr && off[0] != '\0' && off[0] != '0';
  const long supported = disabled ? -1 : membarrier(MEMBARRIER_CMD_QUERY);
  const bool ok = supported >= 0 && (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
                  membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
  g_available.store(ok, std::memory_order_relaxed);
}

// The registration belongs to the address space; a fork child registers its own (one thread,
// none of it in a read section yet).
[[maybe_unused]] const bool g_registered =
    (register_barrier(), set_fork_hooks(ForkStage::kSupport, {.child = register_barrier}), true);

}  // namespace

bool process_barrier_available() {
  return g_available.load(std::memory_order_relaxed);
}

void process_barrier() {
  // Registered: the call cannot fail for a reason worth handling here (EINVAL/EPERM were ruled
  // out at registration). errno is kept for the signal handlers that call it.
  const int saved = errno;
  [[maybe_unused]] const long rc = membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
  errno = saved;
}

}  // namespace userperf::support
