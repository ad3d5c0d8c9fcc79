// BPF_MAP_TYPE_STACK_TRACE (stackmap.c): roundup_pow_of_two(max_entries) buckets, each holding
// one stack (its hash, depth and ips) under an owner-recorded lock. bpf_get_stackid stores the
// stack in bucket hash & (n_buckets - 1) and returns that id; consumers read a stack by id and
// delete it. As in the kernel, at most max_entries stacks are stored at once: a new stack when
// max_entries are stored, even one replacing another with BPF_F_REUSE_STACKID, is -ENOMEM
// (the kernel's preallocated bucket freelist is empty).
#pragma once

#include <atomic>

#include "bpf/maps/map.hpp"
#include "bpf/maps/value_storage.hpp"

namespace userperf::bpf {

class BucketLock;

class StackTraceMap final : public Map {
 public:
  // `spec` has passed check_map_create().
  static Expected<std::unique_ptr<Map>> create(const MapSpec& spec);

  // bpf_get_stackid's bucket step (__bpf_get_stackid) for a stack whose source (user or kernel
  // part) and skip the caller already applied: `ips[0, nr)`, innermost first. Stacks deeper than
  // value_size / 8 are truncated. Returns the id, or -EINVAL (flags outside skip, USER_STACK,
  // FAST_STACK_CMP, REUSE_STACKID), -EFAULT (nr 0), -EEXIST (the bucket holds another stack and
  // BPF_F_REUSE_STACKID is clear), -ENOMEM (see above), -EBUSY (bucket held by the code this
  // handler interrupted, or not acquired in time). BPF_F_FAST_STACK_CMP: equal hashes are the same
  // stack. SIGNAL-SAFE.
  long get_stackid(const std::uint64_t* ips, std::uint32_t nr, std::uint64_t flags);

  void* lookup(const void* key) override;  // nullptr: programs cannot look up stacks
  long update(const void* key, const void* value, std::uint64_t flags) override;  // -EINVAL
  long remove(const void* key) override;

  int lookup_elem(const void* key, void* value) override;
  int update_elem(const void* key, const void* value, std::uint64_t flags) override;  // -EINVAL
  int delete_elem(const void* key) override;
  int get_next_key(const void* key, void* next_key) override;

  MemoryRegion value_region() const override { return {}; }

  std::uint32_t n_buckets() const { return n_buckets_; }

 private:
  struct BucketHeader;
  StackTraceMap(const MapSpec& spec, ValueStorage buckets, std::uint32_t n_buckets);
  BucketHeader& bucket(std::uint32_t id) const;
  std::uint64_t* ips_of(std::uint32_t id) const;
  // Takes one of the max_entries stack slots; false when all are stored.
  bool reserve_stack();
  long delete_id(const void* key, bool from_program);

  ValueStorage buckets_;
  std::uint32_t n_buckets_;
  std::size_t stride_;  // header + value_size
  std::atomic<std::uint32_t> stored_{0};
};

}  // namespace userperf::bpf
