// A lock-free stack of element indices (the kernel's pcpu_freelist, as one list): preallocated
// elements are popped on insert and pushed back on delete. SIGNAL-SAFE and reentrant: a handler
// interrupting a push or pop on the same thread only makes that operation retry. The head packs
// a generation tag with the index so a pop that raced with pop+push of the same element (ABA)
// fails its compare-and-swap. Elements never used yet are handed out from a high-water mark, so
// creating a map with millions of entries touches no per-element memory.
#pragma once

#include <atomic>
#include <cstdint>

namespace userperf::bpf {

class FreeList {
 public:
  static constexpr std::uint32_t kNone = 0xffffffffu;

  // `next` is zeroed storage of `size` words that the list owns from now on.
  FreeList(std::uint32_t* next, std::uint32_t size) : next_(next), size_(size) {}

  std::uint32_t pop();  // kNone when empty
  void push(std::uint32_t index);

 private:
  static std::uint64_t pack(std::uint32_t tag, std::uint32_t index) {
    return (static_cast<std::uint64_t>(tag) << 32) | index;
  }
  std::atomic_ref<std::uint32_t> next(std::uint32_t index) const {
    return std::atomic_ref<std::uint32_t>(next_[index]);
  }

  std::atomic<std::uint64_t> head_{pack(0, kNone)};  // pushed-back elements
  std::atomic<std::uint32_t> fresh_{0};              // [fresh_, size_) were never used
  std::uint32_t* next_;
  std::uint32_t size_;
};

}  // namespace userperf::bpf
