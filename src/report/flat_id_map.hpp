// A map from 64-bit keys to 32-bit ids in one flat array (open addressing, linear probing): the
// report looks up every frame of every sample in one, millions of times, and a node-based
// std::unordered_map spends most of that in cache misses.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace userperf::report {

class FlatIdMap {
 public:
  static constexpr std::uint32_t kNone = UINT32_MAX;

  // The id of `key`, or kNone.
  std::uint32_t find(std::uint64_t key) const {
    if (slots_.empty()) return kNone;
    for (std::size_t i = index(key);; i = (i + 1) & mask_) {
      if (slots_[i].id == kNone) return kNone;
      if (slots_[i].key == key) return slots_[i].id;
    }
  }

  // Records `id` for `key`, which must not be in the map.
  void insert(std::uint64_t key, std::uint32_t id) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    place(key, id);
    ++size_;
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    std::uint32_t id = kNone;
  };

  std::size_t index(std::uint64_t key) const {
    // splitmix64's finalizer: file offsets and addresses differ mostly in their low bits.
    key ^= key >> 30;
    key *= 0xbf58476d1ce4e5b9ULL;
    key ^= key >> 27;
    key *= 0x94d049bb133111ebULL;
    key ^= key >> 31;
    return static_cast<std::size_t>(key) & mask_;
  }

  void place(std::uint64_t key, std::uint32_t id) {
    std::size_t i = index(key);
    while (slots_[i].id != kNone) i = (i + 1) & mask_;
    slots_[i] = {key, id};
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.id != kNone) place(slot.key, slot.id);
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace userperf::report
