// A grace period for the write path (what RCU gives the kernel): writers enter an OutputGuard
// before they load an event's buffer pointer; the engine, after unpublishing a buffer or an event,
// waits in synchronize() until every writer that might have seen it has left. Two counters
// alternate so that a stream of new writers cannot starve synchronize().
#pragma once

#include <atomic>
#include <cstdint>

namespace userperf::core {

class GracePeriod {
 public:
  // SIGNAL-SAFE.
  unsigned enter() {
    const unsigned epoch = epoch_.load(std::memory_order_seq_cst) & 1;
    readers_[epoch].fetch_add(1, std::memory_order_seq_cst);
    return epoch;
  }
  void leave(unsigned epoch) { readers_[epoch].fetch_sub(1, std::memory_order_seq_cst); }

  // Not from a signal handler; callers serialise (engine lock).
  void synchronize();

 private:
  std::atomic<unsigned> epoch_{0};
  std::atomic<std::uint64_t> readers_[2] = {};
};

class OutputGuard {
 public:
  explicit OutputGuard(GracePeriod& gp) : gp_(gp), epoch_(gp.enter()) {}
  ~OutputGuard() { gp_.leave(epoch_); }
  OutputGuard(const OutputGuard&) = delete;
  OutputGuard& operator=(const OutputGuard&) = delete;

 private:
  GracePeriod& gp_;
  unsigned epoch_;
};

}  // namespace userperf::core
