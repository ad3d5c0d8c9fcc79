// A range of memory a program run may touch: the interpreter checks every access against the
// run's regions, maps describe their value storage as one, helpers check their pointer arguments
// against them (CallContext::may_access). Below vm and maps, which both speak of it.
#pragma once

#include <cstdint>

namespace userperf::bpf {

struct MemoryRegion {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;  // one past the last byte
  bool writable = false;
};

}  // namespace userperf::bpf
