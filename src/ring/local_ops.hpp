// The kernel's local_t for a ring's single writer: read-modify-writes that a signal handler
// interrupting the same thread cannot tear (one instruction), without the LOCK prefix that makes
// them atomic against other CPUs too (about 6 ns each here, against about 1). Only for words that
// no other thread modifies at the same time: DataRing's single-writer mode guarantees that (see
// data_ring.hpp). Elsewhere, and under ThreadSanitizer (which cannot see inline assembly), they are
// the ordinary atomic operations.
#pragma once

#include <atomic>
#include <cstdint>

namespace userperf::ring {

#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)

// *word == expected ? (*word = desired, true) : false, as cmpxchg without LOCK.
inline bool local_cmpxchg(std::uint64_t& word, std::uint64_t expected, std::uint64_t desired) {
  bool swapped;
  asm volatile("cmpxchgq %[desired], %[word]"
               : [word] "+m"(word), "+a"(expected), "=@ccz"(swapped)
               : [desired] "r"(desired)
               : "memory");
  return swapped;
}

inline void local_add(std::uint64_t& word, std::uint64_t n) {
  asm volatile("addq %[n], %[word]" : [word] "+m"(word) : [n] "er"(n) : "memory", "cc");
}

#else

inline bool local_cmpxchg(std::uint64_t& word, std::uint64_t expected, std::uint64_t desired) {
  return std::atomic_ref<std::uint64_t>(word).compare_exchange_strong(expected, desired,
                                                                      std::memory_order_relaxed);
}

inline void local_add(std::uint64_t& word, std::uint64_t n) {
  std::atomic_ref<std::uint64_t>(word).fetch_add(n, std::memory_order_relaxed);
}

#endif

// An event counter (std::atomic, for the control path's loads and stores) advanced by the one
// thread that counts it: the same unlocked add on its storage.
template <class T>
inline void local_add(std::atomic<T>& counter, T n) {
  static_assert(sizeof(T) == sizeof(std::uint64_t) && std::atomic<T>::is_always_lock_free);
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
  local_add(*reinterpret_cast<std::uint64_t*>(&counter), static_cast<std::uint64_t>(n));
#else
  counter.fetch_add(n, std::memory_order_relaxed);
#endif
}

// Takes the whole of `word` (leaving 0), as one local_cmpxchg: a handler that took it in between
// makes the exchange fail and the loop read the new value.
inline std::uint64_t local_take(std::uint64_t& word) {
  for (;;) {
    const std::uint64_t value =
        std::atomic_ref<std::uint64_t>(word).load(std::memory_order_relaxed);
    if (value == 0 || local_cmpxchg(word, value, 0)) return value;
  }
}

}  // namespace userperf::ring
