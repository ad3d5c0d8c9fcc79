#include "bpf/maps/hash_map.hpp"

#include <bit>
#include <cstring>
#include <random>

#include "bpf/maps/key_hash.hpp"
#include "bpf/maps/map_access.hpp"
#include "bpf/maps/map_create_check.hpp"

namespace userperf::bpf {

Expected<std::unique_ptr<Map>> HashMap::create(const MapSpec& spec) {
  const std::uint32_t n_buckets = std::bit_ceil(spec.max_entries);  // <= 2^31, checked
  const std::uint32_t cpus = spec.type == BPF_MAP_TYPE_PERCPU_HASH ? possible_cpus() : 1;
  const std::uint64_t elems = spec.max_entries;
  Storage storage;
  const std::pair<ValueStorage*, std::uint64_t> parts[] = {
      {&storage.buckets, std::uint64_t{n_buckets} * sizeof(Bucket)},
      {&storage.headers, elems * sizeof(ElemHeader)},
      {&storage.keys, elems * round_up_8(spec.key_size)},
      {&storage.values, elems * cpus * round_up_8(spec.value_size)},
      {&storage.free_next, elems * sizeof(std::uint32_t)},
  };
  for (const auto& [part, size] : parts) {
    auto allocated = ValueStorage::allocate(size);
    if (!allocated) return allocated.error();
    *part = std::move(allocated.value());
  }
  std::uint64_t seed = 0;
  if (!(spec.map_flags & BPF_F_ZERO_SEED)) {
    std::random_device random;
    seed = (std::uint64_t{random()} << 32) | random();
  }
  return std::unique_ptr<Map>(new HashMap(spec, std::move(storage), n_buckets, cpus, seed));
}

HashMap::HashMap(const MapSpec& spec, Storage storage, std::uint32_t n_buckets, std::uint32_t cpus,
                 std::uint64_t seed)
    : Map(spec),
      storage_(std::move(storage)),
      n_buckets_(n_buckets),
      cpus_(cpus),
      elem_size_(round_up_8(spec.value_size)),
      key_stride_(round_up_8(spec.key_size)),
      seed_(seed),
      lru_(spec.type == BPF_MAP_TYPE_LRU_HASH),
      free_(reinterpret_cast<std::uint32_t*>(storage_.free_next.data()), spec.max_entries) {}

HashMap::Bucket& HashMap::bucket(std::uint32_t index) const {
  return reinterpret_cast<Bucket*>(storage_.buckets.data())[index];
}

HashMap::ElemHeader& HashMap::header(std::uint32_t elem) const {
  return reinterpret_cast<ElemHeader*>(storage_.headers.data())[elem];
}

std::uint8_t* HashMap::key_at(std::uint32_t elem) const {
  return storage_.keys.data() + std::size_t{elem} * key_stride_;
}

std::uint8_t* HashMap::value_at(std::uint32_t elem, std::uint32_t cpu) const {
  return storage_.values.data() + (std::size_t{elem} * cpus_ + cpu) * elem_size_;
}

std::uint32_t HashMap::program_cpu() const {
  return cpus_ == 1 ? 0 : current_cpu() % cpus_;
}

std::atomic_ref<std::uint32_t> HashMap::linked_bucket(std::uint32_t elem) const {
  return std::atomic_ref<std::uint32_t>(header(elem).bucket);
}

std::uint32_t HashMap::find(const Bucket& b, const void* key, std::uint32_t hash) const {
  for (std::uint32_t link = b.head; link != kNil; link = header(link - 1).next) {
    const std::uint32_t elem = link - 1;
    if (header(elem).hash == hash && std::memcmp(key_at(elem), key, spec_.key_size) == 0) {
      return elem;
    }
  }
  return FreeList::kNone;
}

// htab_map_hash, __select_bucket, htab_lock_bucket and lookup_elem_raw in one: every operation on
// a key starts here.
struct HashMap::LockedKey {
  LockedKey(const HashMap& map, const void* key, LockWait wait)
      : hash(hash_bytes(key, map.spec_.key_size, map.seed_)),
        index(hash & (map.n_buckets_ - 1)),
        bucket(map.bucket(index)),
        guard(bucket.lock, wait),
        elem(guard.status() == 0 ? map.find(bucket, key, hash) : FreeList::kNone) {}

  const std::uint32_t hash;
  const std::uint32_t index;  // the bucket's
  Bucket& bucket;
  const BucketGuard guard;   // status() 0 when held, else -EBUSY (and elem is kNone)
  const std::uint32_t elem;  // the element holding the key, FreeList::kNone when none
};

void HashMap::link(std::uint32_t bucket_index, std::uint32_t elem, std::uint32_t hash) {
  Bucket& b = bucket(bucket_index);
  header(elem).hash = hash;
  header(elem).next = b.head;
  b.head = elem + 1;
  linked_bucket(elem).store(bucket_index + 1, std::memory_order_release);
}

void HashMap::unlink(std::uint32_t bucket_index, std::uint32_t elem) {
  std::uint32_t* link = &bucket(bucket_index).head;
  while (*link != elem + 1) link = &header(*link - 1).next;
  *link = header(elem).next;
  linked_bucket(elem).store(kNil, std::memory_order_release);
}

void HashMap::write_value(std::uint32_t elem, const void* value, Source source, bool fresh) {
  if (source == Source::kConsumer && cpus_ > 1) {
    const auto* in = static_cast<const std::uint8_t*>(value);
    for (std::uint32_t cpu = 0; cpu < cpus_; ++cpu) {
      std::memcpy(value_at(elem, cpu), in + std::size_t{cpu} * elem_size_, elem_size_);
    }
    return;
  }
  const std::uint32_t cpu = source == Source::kProgram ? program_cpu() : 0;
  // A new per-CPU element from a program: the other CPUs' values start zeroed (pcpu_init_value).
  if (fresh) std::memset(value_at(elem, 0), 0, std::size_t{elem_size_} * cpus_);
  std::memcpy(value_at(elem, cpu), value, spec_.value_size);
}

long HashMap::update_in_place(const void* key, const void* value, std::uint64_t flags,
                              Source source, LockWait wait) {
  const LockedKey k(*this, key, wait);
  if (k.guard.status() != 0) return k.guard.status();
  const std::uint32_t old = k.elem;
  if (old != FreeList::kNone && flags == BPF_NOEXIST) return -EEXIST;
  if (old == FreeList::kNone && flags == BPF_EXIST) return -ENOENT;
  if (old != FreeList::kNone) {
    write_value(old, value, source, false);
    return 0;
  }
  const std::uint32_t elem = free_.pop();
  if (elem == FreeList::kNone) return -E2BIG;  // every preallocated element is in use
  std::memcpy(key_at(elem), key, spec_.key_size);
  write_value(elem, value, source, true);
  link(k.index, elem, k.hash);
  return 0;
}

std::uint32_t HashMap::pop_or_evict() {
  std::uint32_t elem = free_.pop();
  if (elem != FreeList::kNone) return elem;
  const std::uint32_t total = spec_.max_entries;
  // Two sweeps: the first may only clear reference bits.
  for (std::uint64_t step = 0; step < 2 * std::uint64_t{total} + 1; ++step) {
    const auto candidate =
        static_cast<std::uint32_t>(clock_hand_.fetch_add(1, std::memory_order_relaxed) % total);
    const std::uint32_t linked = linked_bucket(candidate).load(std::memory_order_acquire);
    if (linked == kNil) continue;
    std::atomic_ref<std::uint32_t> ref(header(candidate).ref);
    if (ref.exchange(0, std::memory_order_relaxed) != 0) continue;  // second chance
    Bucket& b = bucket(linked - 1);
    // Never wait here: the bucket may be held by the code this handler interrupted.
    if (b.lock.try_lock() != 0) continue;
    const bool still_there = linked_bucket(candidate).load(std::memory_order_relaxed) == linked;
    if (still_there) unlink(linked - 1, candidate);
    b.lock.unlock();
    if (still_there) return candidate;
  }
  return free_.pop();
}

long HashMap::update_lru(const void* key, const void* value, std::uint64_t flags, Source source,
                         LockWait wait) {
  // Take the new element before the bucket lock, as prealloc_lru_pop: eviction locks buckets.
  const std::uint32_t elem = pop_or_evict();
  if (elem == FreeList::kNone) return -ENOMEM;
  std::memcpy(key_at(elem), key, spec_.key_size);
  write_value(elem, value, source, true);
  std::atomic_ref<std::uint32_t>(header(elem).ref).store(0, std::memory_order_relaxed);
  const LockedKey k(*this, key, wait);
  if (k.guard.status() != 0) {
    free_.push(elem);
    return k.guard.status();
  }
  const std::uint32_t old = k.elem;
  int err = 0;
  if (old != FreeList::kNone && flags == BPF_NOEXIST) err = -EEXIST;
  if (old == FreeList::kNone && flags == BPF_EXIST) err = -ENOENT;
  if (err != 0) {
    free_.push(elem);
    return err;
  }
  link(k.index, elem, k.hash);
  if (old != FreeList::kNone) {
    unlink(k.index, old);
    free_.push(old);
  }
  return 0;
}

long HashMap::delete_key(const void* key, LockWait wait) {
  const LockedKey k(*this, key, wait);
  if (k.guard.status() != 0) return k.guard.status();
  if (k.elem == FreeList::kNone) return -ENOENT;
  unlink(k.index, k.elem);
  free_.push(k.elem);
  return 0;
}

void* HashMap::lookup(const void* key) {
  const LockedKey k(*this, key, LockWait::kProgram);
  if (k.elem == FreeList::kNone) return nullptr;  // absent, or the bucket was busy
  if (lru_) std::atomic_ref<std::uint32_t>(header(k.elem).ref).store(1, std::memory_order_relaxed);
  return value_at(k.elem, program_cpu());
}

long HashMap::update(const void* key, const void* value, std::uint64_t flags) {
  if (int err = check_program_write(spec_)) return err;
  if (int err = check_update_flags(flags)) return err;
  return lru_ ? update_lru(key, value, flags, Source::kProgram, LockWait::kProgram)
              : update_in_place(key, value, flags, Source::kProgram, LockWait::kProgram);
}

long HashMap::remove(const void* key) {
  if (int err = check_program_write(spec_)) return err;
  return delete_key(key, LockWait::kProgram);
}

int HashMap::lookup_elem(const void* key, void* value) {
  if (int err = check_consumer_read(spec_)) return err;
  const LockedKey k(*this, key, LockWait::kConsumer);
  if (k.guard.status() != 0) return k.guard.status();
  if (k.elem == FreeList::kNone) return -ENOENT;
  // The syscall's lookup leaves the LRU reference bit alone (htab_lru_map_lookup_elem_sys).
  if (cpus_ == 1) {
    std::memcpy(value, value_at(k.elem, 0), spec_.value_size);
  } else {
    std::memcpy(value, value_at(k.elem, 0), std::size_t{elem_size_} * cpus_);
  }
  return 0;
}

int HashMap::update_elem(const void* key, const void* value, std::uint64_t flags) {
  if (int err = check_consumer_write(spec_)) return err;
  if (int err = check_update_flags(flags)) return err;
  return static_cast<int>(
      lru_ ? update_lru(key, value, flags, Source::kConsumer, LockWait::kConsumer)
           : update_in_place(key, value, flags, Source::kConsumer, LockWait::kConsumer));
}

int HashMap::delete_elem(const void* key) {
  if (int err = check_consumer_write(spec_)) return err;
  return static_cast<int>(delete_key(key, LockWait::kConsumer));
}

int HashMap::get_next_key(const void* key, void* next_key) {
  if (int err = check_consumer_read(spec_)) return err;
  std::uint32_t first_bucket = 0;
  if (key != nullptr) {
    // The element after `key` in its chain, else the first element of a later bucket; a key
    // that is not in the map restarts from the first bucket (htab_map_get_next_key).
    const LockedKey k(*this, key, LockWait::kConsumer);
    if (k.guard.status() != 0) return k.guard.status();
    if (k.elem != FreeList::kNone) {
      const std::uint32_t next = header(k.elem).next;
      if (next != kNil) {
        std::memcpy(next_key, key_at(next - 1), spec_.key_size);
        return 0;
      }
      first_bucket = k.index + 1;
    }
  }
  for (std::uint32_t index = first_bucket; index < n_buckets_; ++index) {
    Bucket& b = bucket(index);
    BucketGuard guard(b.lock, LockWait::kConsumer);
    if (guard.status() != 0) return guard.status();
    if (b.head != kNil) {
      std::memcpy(next_key, key_at(b.head - 1), spec_.key_size);
      return 0;
    }
  }
  return -ENOENT;
}

MemoryRegion HashMap::value_region() const {
  return storage_.values.region(!(spec_.map_flags & BPF_F_RDONLY_PROG));
}

}  // namespace userperf::bpf
