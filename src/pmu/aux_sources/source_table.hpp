// A fixed table of published sources that a write path (a hook, a signal handler) searches
// without locks. Readers search and use what they found inside an OutputGuard on grace(); after
// remove(), synchronize() returns once every reader that might have seen the entry has left. The
// table has its own grace period (not an engine's): a write path that has only a function address
// or a descriptor does not know which engine the source belongs to.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>

#include "core/output_guard.hpp"

namespace userperf::pmu {

template <class T, std::size_t N>
class SourceTable {
 public:
  // False when the table is full. Not from a signal handler.
  bool insert(T* item) {
    for (std::size_t i = 0; i < N; ++i) {
      T* expected = nullptr;
      if (slots_[i].compare_exchange_strong(expected, item, std::memory_order_acq_rel)) {
        if (i >= used_.load(std::memory_order_relaxed)) {
          used_.store(i + 1, std::memory_order_release);
        }
        return true;
      }
    }
    return false;
  }
  // Unpublishes the item; the caller frees it after synchronize(). Not from a signal handler.
  void remove(T* item) {
    for (std::size_t i = 0; i < N; ++i) {
      T* expected = item;
      if (slots_[i].compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel)) return;
    }
  }
  // Returns once every reader that entered before it has left. Not from a signal handler.
  void synchronize() { grace_.synchronize(); }
  core::GracePeriod& grace() { return grace_; }
  // The first published item `match` accepts, else nullptr. SIGNAL-SAFE.
  template <class Match>
  T* find(Match&& match) const {
    const std::size_t used = used_.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < used; ++i) {
      T* item = slots_[i].load(std::memory_order_acquire);
      if (item != nullptr && match(*item)) return item;
    }
    return nullptr;
  }
  template <class Fn>
  void for_each(Fn&& fn) const {
    find([&fn](T& item) {
      fn(item);
      return false;
    });
  }

 private:
  std::array<std::atomic<T*>, N> slots_{};
  std::atomic<std::size_t> used_{0};  // slots at or above it were never used
  core::GracePeriod grace_;
};

}  // namespace userperf::pmu
