// The synthetic trace source (PMU "synthetic"): fills its AUX area with the synthetic format
// (trace/synthetic_format.hpp), whose bytes at every stream position are known, so tests and
// benchmarks can check any window of the AUX path exactly.
//
// attr.config  = bytes per second produced by a thread running from add() to del() (0: none, the
//                event produces only when driven by produce())
// attr.config1 = seed
// attr.config2 = chunk size: bytes per AUX entry (0 = 4096; a multiple of 8, at most 1 MiB)
// The stream position of a byte is its AUX position: a chunk that could not be stored (full
// area, busy) is not part of the stream, so every window the consumer sees verifies.
#pragma once

#include <cstdint>

#include "core/aux_source_pmu.hpp"

namespace userperf::pmu {

class SyntheticPmu final : public core::AuxSourcePmu {
 public:
  using core::AuxSourcePmu::AuxSourcePmu;
  const char* name() const override { return "synthetic"; }
  int event_init(core::Event& event) override;
  int event_bind(core::Event& event) override;

  // Appends up to `bytes` (rounded up to 8) of the stream in chunks on the calling thread. Returns
  // the bytes stored: fewer when the event is not active, the area is full or busy, or another
  // producer (the rate thread, a nested call) is running. SIGNAL-SAFE.
  std::uint64_t produce(core::Event& event, std::uint64_t bytes);
  // The stream position where the next chunk goes.
  std::uint64_t position(core::Event& event);

 protected:
  void started(Source& source) override;
  void stopping(Source& source) override;
  void new_area(Source& source) override;
};

}  // namespace userperf::pmu
