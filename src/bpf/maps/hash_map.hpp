// BPF_MAP_TYPE_HASH, PERCPU_HASH and LRU_HASH (hashtab.c, bpf_lru_list.c), fully preallocated:
// roundup_pow_of_two(max_entries) buckets, each a chain of element indices under its own
// owner-recorded lock, and max_entries elements taken from and returned to a lock-free free list.
// Keys, element headers and values live in separate zeroed arrays, so value_region() covers the
// values alone.
//
// HASH and PERCPU_HASH update an existing element's value in place; a new key takes a free
// element (-E2BIG when there is none, as a full preallocated kernel map). LRU_HASH follows
// htab_lru_map_update_elem: every update first takes a free element, evicting one when none is
// free, then links it and frees the element it replaces, so updating a key of a full LRU map
// can evict another key, as in the kernel. Eviction is CLOCK (second chance): a hand sweeps the
// elements, a lookup from a program sets an element's reference bit (the kernel's
// bpf_lru_node_set_ref), the hand clears set bits and evicts the first element whose bit is clear.
// The kernel's active/inactive lists approximate LRU the same way. BPF_F_NO_COMMON_LRU (per-CPU
// LRU lists) is accepted and behaves as one common list.
#pragma once

#include <atomic>

#include "bpf/maps/bucket_lock.hpp"
#include "bpf/maps/free_list.hpp"
#include "bpf/maps/map.hpp"
#include "bpf/maps/value_storage.hpp"

namespace userperf::bpf {

class HashMap final : public Map {
 public:
  // `spec` has passed check_map_create().
  static Expected<std::unique_ptr<Map>> create(const MapSpec& spec);

  void* lookup(const void* key) override;
  long update(const void* key, const void* value, std::uint64_t flags) override;
  long remove(const void* key) override;

  int lookup_elem(const void* key, void* value) override;
  int update_elem(const void* key, const void* value, std::uint64_t flags) override;
  int delete_elem(const void* key) override;
  int get_next_key(const void* key, void* next_key) override;

  MemoryRegion value_region() const override;

 private:
  static constexpr std::uint32_t kNil = 0;  // chain links and bucket numbers are stored + 1

  struct Bucket {
    BucketLock lock;
    std::uint32_t head = kNil;  // first element + 1
  };
  struct ElemHeader {
    std::uint32_t next;  // next element of the chain + 1; under the bucket lock
    std::uint32_t
        bucket;  // bucket + 1 while linked, kNil while free (atomic: the LRU hand reads it)
    std::uint32_t hash;
    std::uint32_t ref;  // LRU reference bit (atomic)
  };
  // Where the bytes of an update come from.
  enum class Source : std::uint8_t {
    kProgram,   // value_size bytes for the current CPU's slot
    kConsumer,  // one round_up(value_size, 8) slot per CPU for per-CPU maps
  };
  struct Storage {
    ValueStorage buckets, headers, keys, values, free_next;
  };

  HashMap(const MapSpec& spec, Storage storage, std::uint32_t n_buckets, std::uint32_t cpus,
          std::uint64_t seed);

  Bucket& bucket(std::uint32_t index) const;
  ElemHeader& header(std::uint32_t elem) const;
  std::uint8_t* key_at(std::uint32_t elem) const;
  std::uint8_t* value_at(std::uint32_t elem, std::uint32_t cpu) const;
  std::uint32_t program_cpu() const;
  std::atomic_ref<std::uint32_t> linked_bucket(std::uint32_t elem) const;

  // Under the bucket's lock: the element holding `key`, or FreeList::kNone.
  std::uint32_t find(const Bucket& b, const void* key, std::uint32_t hash) const;
  // The bucket a key hashes to, locked while this lives, and the element holding the key.
  struct LockedKey;
  void link(std::uint32_t bucket_index, std::uint32_t elem, std::uint32_t hash);
  void unlink(std::uint32_t bucket_index, std::uint32_t elem);
  void write_value(std::uint32_t elem, const void* value, Source source, bool fresh);

  long update_in_place(const void* key, const void* value, std::uint64_t flags, Source source,
                       LockWait wait);
  long update_lru(const void* key, const void* value, std::uint64_t flags, Source source,
                  LockWait wait);
  long delete_key(const void* key, LockWait wait);
  // LRU: a free element, evicting one when none is free; FreeList::kNone when nothing could be
  // evicted (every candidate's bucket busy or referenced twice around).
  std::uint32_t pop_or_evict();

  Storage storage_;
  std::uint32_t n_buckets_;
  std::uint32_t cpus_;        // value slots per element
  std::uint32_t elem_size_;   // round_up(value_size, 8)
  std::uint32_t key_stride_;  // round_up(key_size, 8)
  std::uint64_t seed_;
  bool lru_;
  FreeList free_;
  std::atomic<std::uint64_t> clock_hand_{0};
};

}  // namespace userperf::bpf
