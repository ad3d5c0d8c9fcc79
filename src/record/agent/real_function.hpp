// The libc function an agent wrapper stands in front of: dlsym(RTLD_NEXT), resolved into a slot
// once. The wrappers resolve their slots from a constructor when the agent loads (some run in
// signal handlers or vfork children, where dlsym is not safe) and again on first use, for a
// wrapper called from an earlier library's constructor.
#pragma once

#include <dlfcn.h>

namespace userperf::record::agent {

template <class Function>
Function resolve_real(Function& slot, const char* name) {
  if (slot == nullptr) slot = reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
  return slot;
}

}  // namespace userperf::record::agent
