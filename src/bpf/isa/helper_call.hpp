// The calling convention of helpers (BPF_CALL with src_reg 0): r0 = fn(r1..r5), and what a helper
// sees of the run that called it. The interpreter calls them through a table indexed by helper id;
// runtime and perf define them; nothing here depends on either.
#pragma once

#include <cstdint>
#include <span>

#include "bpf/isa/memory_region.hpp"

namespace userperf::bpf {

// What a helper sees besides its five arguments.
struct CallContext {
  void* env = nullptr;                    // run()'s env: the caller's per-run state
  std::span<const MemoryRegion> regions;  // the run's own: its active stack, then run()'s regions
  // The running program's static regions (map storage, global data). Apart from `regions`
  // because a tail call changes them and nothing else: the call swaps one span.
  std::span<const MemoryRegion> statics;
  bool abort = false;  // set by a helper to end the program at once with r0 = its return value

  // True when [p, p + size) lies inside one region of `regions`, `statics` or the shared regions
  // (isa/shared_regions.hpp: inner maps) (writable when `write`); no overflow on wrap.
  bool may_access(std::uintptr_t p, std::uint64_t size, bool write) const;
};

// A helper: r0 = fn(r1..r5). SIGNAL-SAFE when the program runs on the overflow path.
using HelperFn = std::uint64_t (*)(std::uint64_t r1, std::uint64_t r2, std::uint64_t r3,
                                   std::uint64_t r4, std::uint64_t r5, CallContext& call);

}  // namespace userperf::bpf
