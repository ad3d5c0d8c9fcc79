// close, close_range, closefrom, dup2 and dup3, wrapped so that the program cannot take the
// agent's descriptors (support/descriptors.hpp: they live at a floor high above the program's):
// - close(agent's) from the program: -1/EBADF, as if nothing were open there (the program did not
//   open it; a daemon closing every descriptor up to its limit sees what it would see unrecorded);
// - close_range / closefrom: applied to the ranges around the agent's descriptors;
// - dup2/dup3 onto an agent descriptor: the program's number wins. The agent says so once, goes
//   idle (its events closed, the recorder told by the connection's end) and the call goes through;
// - dup2/dup3 of an agent descriptor: EBADF.
// The agent's own calls (its return address lies in the agent) go straight through; a descriptor
// that is no longer the agent's (a raw close_range, then another file at that number) is forgotten,
// never closed.
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>

#include "record/agent/real_function.hpp"
#include "record/agent/session.hpp"
#include "support/descriptors.hpp"

extern "C" char __ehdr_start;  // the agent's first byte (the linker's)
extern "C" char _end;          // one past its last (the end of its bss)

namespace {

using userperf::support::owns_descriptor;

using userperf::record::agent::resolve_real;

using Close = int (*)(int);
using CloseRange = int (*)(unsigned, unsigned, int);
using CloseFrom = void (*)(int);
using Dup2 = int (*)(int, int);
using Dup3 = int (*)(int, int, int);

struct RealDescriptorCalls {
  Close close = nullptr;
  CloseRange close_range = nullptr;
  CloseFrom closefrom = nullptr;
  Dup2 dup2 = nullptr;
  Dup3 dup3 = nullptr;
};
RealDescriptorCalls g_real;

// Resolved at load: close is async-signal-safe, dlsym is not.
__attribute__((constructor)) void resolve_real_descriptor_calls() {
  resolve_real(g_real.close, "close");
  resolve_real(g_real.close_range, "close_range");
  resolve_real(g_real.closefrom, "closefrom");
  resolve_real(g_real.dup2, "dup2");
  resolve_real(g_real.dup3, "dup3");
}

bool from_agent(const void* return_address) {
  const auto at = reinterpret_cast<std::uintptr_t>(return_address);
  return at >= reinterpret_cast<std::uintptr_t>(&__ehdr_start) &&
         at < reinterpret_cast<std::uintptr_t>(&_end);
}

// The agent closes one of its own: only while it is still the same open file.
int close_own(int fd) {
  if (owns_descriptor(fd)) {
    const bool ours = userperf::support::still_ours(fd);
    userperf::support::release_descriptor(fd);
    if (!ours) return 0;  // closed behind the agent's back; the number is the program's now
  }
  return resolve_real(g_real.close, "close")(fd);
}

// close_range(first, last, flags) on the program's behalf: every range between the agent's
// descriptors. CLOSE_RANGE_CLOEXEC alone touches nothing the agent needs (its descriptors are
// close-on-exec already) and goes through whole.
int close_program_range(unsigned first, unsigned last, int flags) {
  const CloseRange real = resolve_real(g_real.close_range, "close_range");
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  if ((flags & CLOSE_RANGE_CLOEXEC) != 0) return real(first, last, flags);
  unsigned from = first;
  while (from <= last) {
    const int owned = userperf::support::next_owned_descriptor(from, last);
    const unsigned to = owned < 0 ? last : static_cast<unsigned>(owned) - 1;
    if (owned < 0 || static_cast<unsigned>(owned) > from) {
      if (real(from, to, flags) != 0) return -1;
      flags &= ~CLOSE_RANGE_UNSHARE;  // the table is the process's own after the first call
    }
    if (owned < 0 || static_cast<unsigned>(owned) == UINT_MAX) break;
    from = static_cast<unsigned>(owned) + 1;
  }
  return 0;
}

// The program takes `fd`'s number for one of its own: the agent gives up recording first.
void yield_descriptor(int fd) {
  userperf::record::agent::Session* session = userperf::record::agent::current_session();
  if (session != nullptr) {
    userperf::record::agent::say(
        "the program replaced descriptor %d, the agent's, with its own (dup2); recording of this "
        "process stops",
        fd);
    userperf::record::agent::go_idle(*session);
  }
  userperf::support::release_descriptor(fd);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int close(int fd) {
  if (from_agent(__builtin_return_address(0))) return close_own(fd);
  if (owns_descriptor(fd)) {
    errno = EBADF;
    return -1;
  }
  return resolve_real(g_real.close, "close")(fd);
}

__attribute__((visibility("default"))) int close_range(unsigned first, unsigned last, int flags) {
  if (from_agent(__builtin_return_address(0))) {
    return resolve_real(g_real.close_range, "close_range")(first, last, flags);
  }
  return close_program_range(first, last, flags);
}

__attribute__((visibility("default"))) void closefrom(int low) {
  if (low < 0) low = 0;
  close_program_range(static_cast<unsigned>(low), UINT_MAX, 0);
}

__attribute__((visibility("default"))) int dup2(int old_fd, int new_fd) {
  const bool agent = from_agent(__builtin_return_address(0));
  if (!agent && owns_descriptor(old_fd)) {
    errno = EBADF;
    return -1;
  }
  if (!agent && old_fd != new_fd && owns_descriptor(new_fd)) yield_descriptor(new_fd);
  return resolve_real(g_real.dup2, "dup2")(old_fd, new_fd);
}

__attribute__((visibility("default"))) int dup3(int old_fd, int new_fd, int flags) {
  const bool agent = from_agent(__builtin_return_address(0));
  if (!agent && owns_descriptor(old_fd)) {
    errno = EBADF;
    return -1;
  }
  if (!agent && old_fd != new_fd && owns_descriptor(new_fd)) yield_descriptor(new_fd);
  return resolve_real(g_real.dup3, "dup3")(old_fd, new_fd, flags);
}

}  // extern "C"
