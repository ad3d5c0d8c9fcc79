// CallContext::may_access: how a helper checks a pointer argument against the run's regions.
#include "bpf/isa/helper_call.hpp"

#include "bpf/isa/shared_regions.hpp"

namespace userperf::bpf {

bool CallContext::may_access(std::uintptr_t p, std::uint64_t size, bool write) const {
  for (const MemoryRegion& r : regions) {
    if (r.allows(p, size, write)) return true;
  }
  for (const MemoryRegion& r : statics) {
    if (r.allows(p, size, write)) return true;
  }
  // Last: the values of inner maps of map-in-map slots, which any program may reach.
  for (const MemoryRegion& r : shared_regions()) {
    if (r.allows(p, size, write)) return true;
  }
  return false;
}

}  // namespace userperf::bpf
