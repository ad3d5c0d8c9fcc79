#include "bpf/maps/stack_trace_map.hpp"

#include <bit>
#include <cstring>

#include "bpf/maps/bucket_lock.hpp"
#include "bpf/maps/key_hash.hpp"
#include "bpf/maps/map_access.hpp"

namespace userperf::bpf {

struct StackTraceMap::BucketHeader {
  BucketLock lock;
  std::uint32_t hash;
  std::uint32_t nr;  // 0: empty
};

namespace {
constexpr std::uint64_t kStackIdFlags =
    BPF_F_SKIP_FIELD_MASK | BPF_F_USER_STACK | BPF_F_FAST_STACK_CMP | BPF_F_REUSE_STACKID;
}

Expected<std::unique_ptr<Map>> StackTraceMap::create(const MapSpec& spec) {
  const std::uint32_t n_buckets = std::bit_ceil(spec.max_entries);  // <= 2^31, checked
  auto buckets = ValueStorage::allocate(std::uint64_t{n_buckets} *
                                        (sizeof(BucketHeader) + std::uint64_t{spec.value_size}));
  if (!buckets) return buckets.error();
  return std::unique_ptr<Map>(new StackTraceMap(spec, std::move(buckets.value()), n_buckets));
}

StackTraceMap::StackTraceMap(const MapSpec& spec, ValueStorage buckets, std::uint32_t n_buckets)
    : Map(spec),
      buckets_(std::move(buckets)),
      n_buckets_(n_buckets),
      stride_(sizeof(BucketHeader) + spec.value_size) {}

StackTraceMap::BucketHeader& StackTraceMap::bucket(std::uint32_t id) const {
  return *reinterpret_cast<BucketHeader*>(buckets_.data() + id * stride_);
}

std::uint64_t* StackTraceMap::ips_of(std::uint32_t id) const {
  return reinterpret_cast<std::uint64_t*>(buckets_.data() + id * stride_ + sizeof(BucketHeader));
}

bool StackTraceMap::reserve_stack() {
  std::uint32_t stored = stored_.load(std::memory_order_relaxed);
  while (stored < spec_.max_entries) {
    if (stored_.compare_exchange_weak(stored, stored + 1, std::memory_order_relaxed)) return true;
  }
  return false;
}

long StackTraceMap::get_stackid(const std::uint64_t* ips, std::uint32_t nr, std::uint64_t flags) {
  if (flags & ~kStackIdFlags) return -EINVAL;
  if (nr == 0) return -EFAULT;  // nothing left after the skip
  nr = std::min(nr, spec_.value_size / 8);
  const std::size_t trace_len = std::size_t{nr} * sizeof(std::uint64_t);
  const std::uint32_t hash = hash_bytes(ips, trace_len, 0);
  const std::uint32_t id = hash & (n_buckets_ - 1);
  BucketHeader& b = bucket(id);
  BucketGuard guard(b.lock, LockWait::kProgram);
  if (guard.status() != 0) return guard.status();
  const bool hash_matches = b.nr != 0 && b.hash == hash;
  if (hash_matches && (flags & BPF_F_FAST_STACK_CMP)) return id;
  if (hash_matches && b.nr == nr && std::memcmp(ips_of(id), ips, trace_len) == 0) return id;
  if (b.nr != 0 && !(flags & BPF_F_REUSE_STACKID)) return -EEXIST;
  // A replacement needs a free stack slot before the old one is released, as the kernel's
  // freelist pop precedes the push of the old bucket.
  if (b.nr != 0) {
    if (stored_.load(std::memory_order_relaxed) >= spec_.max_entries) return -ENOMEM;
  } else if (!reserve_stack()) {
    return -ENOMEM;
  }
  std::memcpy(ips_of(id), ips, trace_len);
  b.hash = hash;
  b.nr = nr;
  return id;
}

void* StackTraceMap::lookup(const void* key) {
  (void)key;
  return nullptr;
}

long StackTraceMap::update(const void* key, const void* value, std::uint64_t flags) {
  (void)key, (void)value, (void)flags;
  return -EINVAL;
}

long StackTraceMap::delete_id(const void* key, bool from_program) {
  std::uint32_t id;
  std::memcpy(&id, key, sizeof(id));
  if (id >= n_buckets_) return -E2BIG;
  BucketHeader& b = bucket(id);
  BucketGuard guard(b.lock, from_program ? LockWait::kProgram : LockWait::kConsumer);
  if (guard.status() != 0) return guard.status();
  if (b.nr == 0) return -ENOENT;
  b.nr = 0;
  stored_.fetch_sub(1, std::memory_order_relaxed);
  return 0;
}

long StackTraceMap::remove(const void* key) {
  return delete_id(key, true);
}

int StackTraceMap::lookup_elem(const void* key, void* value) {
  if (int err = check_consumer_read(spec_)) return err;
  std::uint32_t id;
  std::memcpy(&id, key, sizeof(id));
  if (id >= n_buckets_) return -ENOENT;
  BucketHeader& b = bucket(id);
  BucketGuard guard(b.lock, LockWait::kConsumer);
  if (guard.status() != 0) return guard.status();
  if (b.nr == 0) return -ENOENT;
  // bpf_stackmap_copy: the stored ips, then zeros up to value_size.
  const std::size_t trace_len = std::size_t{b.nr} * sizeof(std::uint64_t);
  std::memcpy(value, ips_of(id), trace_len);
  std::memset(static_cast<std::uint8_t*>(value) + trace_len, 0, spec_.value_size - trace_len);
  return 0;
}

int StackTraceMap::update_elem(const void* key, const void* value, std::uint64_t flags) {
  (void)key, (void)value, (void)flags;
  if (int err = check_consumer_write(spec_)) return err;
  return -EINVAL;  // stacks are stored by bpf_get_stackid only
}

int StackTraceMap::delete_elem(const void* key) {
  if (int err = check_consumer_write(spec_)) return err;
  return static_cast<int>(delete_id(key, false));
}

int StackTraceMap::get_next_key(const void* key, void* next_key) {
  if (int err = check_consumer_read(spec_)) return err;
  auto occupied = [this](std::uint32_t id) {
    BucketHeader& b = bucket(id);
    BucketGuard guard(b.lock, LockWait::kConsumer);
    return guard.status() == 0 && b.nr != 0;
  };
  // stack_map_get_next_key: after a stored id, the next stored one; else from id 0.
  std::uint32_t id = 0;
  if (key != nullptr) {
    std::memcpy(&id, key, sizeof(id));
    id = (id >= n_buckets_ || !occupied(id)) ? 0 : id + 1;
  }
  while (id < n_buckets_ && !occupied(id)) ++id;
  if (id >= n_buckets_) return -ENOENT;
  std::memcpy(next_key, &id, sizeof(id));
  return 0;
}

}  // namespace userperf::bpf
