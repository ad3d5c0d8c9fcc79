#include "core/output_guard.hpp"

#include <sched.h>

namespace userperf::core {

void GracePeriod::synchronize() {
  // Writers that entered before the flip counted themselves in the old slot; later ones see the
  // unpublished pointers. Flip twice so both slots have drained once since the caller unpublished.
  for (int round = 0; round < 2; ++round) {
    const unsigned old = epoch_.fetch_add(1, std::memory_order_seq_cst) & 1;
    while (readers_[old].load(std::memory_order_seq_cst) != 0) sched_yield();
  }
}

}  // namespace userperf::core
