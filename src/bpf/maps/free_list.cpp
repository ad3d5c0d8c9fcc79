#include "bpf/maps/free_list.hpp"

namespace userperf::bpf {

std::uint32_t FreeList::pop() {
  std::uint64_t head = head_.load(std::memory_order_acquire);
  for (;;) {
    auto index = static_cast<std::uint32_t>(head);
    if (index == kNone) break;
    std::uint32_t following = next(index).load(std::memory_order_relaxed);
    auto tag = static_cast<std::uint32_t>(head >> 32);
    if (head_.compare_exchange_weak(head, pack(tag + 1, following), std::memory_order_acq_rel,
                                    std::memory_order_acquire)) {
      return index;
    }
  }
  std::uint32_t fresh = fresh_.load(std::memory_order_relaxed);
  while (fresh < size_) {
    if (fresh_.compare_exchange_weak(fresh, fresh + 1, std::memory_order_relaxed)) return fresh;
  }
  return kNone;
}

void FreeList::push(std::uint32_t index) {
  std::uint64_t head = head_.load(std::memory_order_relaxed);
  for (;;) {
    next(index).store(static_cast<std::uint32_t>(head), std::memory_order_relaxed);
    auto tag = static_cast<std::uint32_t>(head >> 32);
    if (head_.compare_exchange_weak(head, pack(tag + 1, index), std::memory_order_acq_rel,
                                    std::memory_order_relaxed)) {
      return;
    }
  }
}

}  // namespace userperf::bpf
