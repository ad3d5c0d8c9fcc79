// The kernel's fd arrays (arraymap.c: PERF_EVENT_ARRAY, PROG_ARRAY, ARRAY_OF_MAPS, CGROUP_ARRAY):
// a consumer stores a descriptor, the map keeps the object an FdResolver resolves it to, and a
// helper finds it with object_at(). Slots are swapped atomically, so object_at() is SIGNAL-SAFE.
// The kernel frees an overwritten or deleted object only after an RCU grace period; here the
// resolver's put() is called at once, so a resolver must keep an object usable by a program that
// fetched it before (the perf binding defers an event's release past its output grace period, the
// runtime keeps programs alive, a cgroup array keeps its records until it goes).
//
// One mechanism for every fd array; a type differs only where the kernel's map ops do: whether a
// consumer's lookup returns anything (map_fd_sys_lookup_elem) and what an object must satisfy to
// be stored (map_fd_get_ptr's checks).
#pragma once

#include <atomic>

#include "bpf/maps/map.hpp"
#include "bpf/maps/value_storage.hpp"

namespace userperf::bpf {

class FdArray : public Map {
 public:
  ~FdArray() override;

  // Program side: programs see no slot's object through lookup (the verifier allows only the
  // type's helpers) except an ARRAY_OF_MAPS's, whose lookup gives the inner map itself; lookup
  // gives nullptr otherwise and update/remove -EOPNOTSUPP; put() then need not be signal-safe.
  void* lookup(const void* key) final;
  long update(const void* key, const void* value, std::uint64_t flags) final;
  long remove(const void* key) final;
  void* object_at(std::uint32_t index) final;

  int lookup_elem(const void* key, void* value) final;
  int update_elem(const void* key, const void* value, std::uint64_t flags) final;
  int delete_elem(const void* key) final;
  int get_next_key(const void* key, void* next_key) final;

  MemoryRegion value_region() const final { return {}; }

 protected:
  // `spec` has passed check_map_create(); `resolver` must not be null. Slots are allocated by
  // allocate_slots() so a type's create() can report the failure.
  FdArray(const MapSpec& spec, std::shared_ptr<FdResolver> resolver, ValueStorage slots);
  static Expected<ValueStorage> allocate_slots(const MapSpec& spec);

  // array_of_map_lookup_elem: a program's lookup gives the slot's object.
  virtual bool lookup_gives_object() const { return false; }
  // map_fd_sys_lookup_elem: what a consumer's lookup of a full slot writes (4 bytes). A type
  // without one (the default) answers every lookup -ENOTSUPP, as the kernel does.
  virtual bool has_sys_lookup() const { return false; }
  virtual std::uint32_t sys_lookup(void* object) {
    (void)object;
    return 0;
  }
  // map_fd_get_ptr's type check of a resolved object: 0, or -errno to refuse the store.
  virtual int check_storable(void* object) {
    (void)object;
    return 0;
  }

 private:
  std::atomic_ref<void*> slot(std::uint32_t index) const;

  std::shared_ptr<FdResolver> resolver_;
  ValueStorage slots_;  // max_entries object pointers, null when empty
  // One past the highest slot ever stored: the destructor walks only that far, so that an array
  // of 2^31 slots (16 GiB of address space, mapped on first touch) costs nothing to destroy when
  // few were used (walking them all took over 10 s in a fuzz campaign; the kernel's array could
  // not have been allocated at all).
  std::atomic<std::uint32_t> stored_end_{0};
};

}  // namespace userperf::bpf
