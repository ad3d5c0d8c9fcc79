// A range of memory a program run may touch: the interpreter checks every access against the
// run's regions, maps describe their value storage as one, helpers check their pointer arguments
// against them (CallContext::may_access). Below vm and maps, which both speak of it. allows() is
// the one test of an access against a region, for the interpreter's loads and stores and for the
// helpers alike.
#pragma once

#include <cstdint>

namespace userperf::bpf {

struct MemoryRegion {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;  // one past the last byte
  bool writable = false;

  // True when [addr, addr + size) lies inside this region and, for a write, the region is
  // writable. No wrap: addr < end, then the room left is end - addr.
  bool allows(std::uint64_t addr, std::uint64_t size, bool write) const {
    return addr >= begin && addr < end && size <= end - addr && (writable || !write);
  }
};

}  // namespace userperf::bpf
