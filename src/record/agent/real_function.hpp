// The libc function an agent wrapper stands in front of: dlsym(RTLD_NEXT), resolved into a slot
// once. The wrappers resolve their slots from a constructor when the agent loads (some run in
// signal handlers or vfork children, where dlsym is not safe) and again on first use, for a
// wrapper called from an earlier library's constructor. With a version (dlvsym), that version of
// the name: for the functions libc keeps two implementations of (pthread_cond_wait@GLIBC_2.2.5,
// the old condition variable, beside the default @GLIBC_2.3.2).
#pragma once

#include <dlfcn.h>

namespace userperf::record::agent {

template <class Function>
Function resolve_real(Function& slot, const char* name, const char* version = nullptr) {
  if (slot == nullptr) {
    slot = reinterpret_cast<Function>(version == nullptr ? dlsym(RTLD_NEXT, name)
                                                         : dlvsym(RTLD_NEXT, name, version));
  }
  return slot;
}

}  // namespace userperf::record::agent
