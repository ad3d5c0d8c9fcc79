// Maps: the program side (helpers: lookup returns a pointer into the map's storage) and the
// consumer side (the bpf() syscall's MAP_LOOKUP/UPDATE/DELETE/GET_NEXT_KEY semantics, values of
// per-CPU maps as one round_up(value_size, 8) slot per possible CPU). Errors are the kernel's.
#pragma once

#include <cstdint>
#include <memory>

#include "bpf/isa/memory_region.hpp"
#include "bpf/isa/program_image.hpp"
#include "support/expected.hpp"

namespace userperf::bpf {

// For PERF_EVENT_ARRAY (and any map whose values are descriptors): turns the descriptor a
// consumer stores into the object the helpers use, and releases it when the slot is overwritten,
// deleted or the map destroyed. The perf binding supplies one that resolves userperf events.
class FdResolver {
 public:
  virtual ~FdResolver() = default;
  virtual Expected<void*> get(int fd) = 0;
  virtual void put(void* object) = 0;
};

// For PROG_ARRAY: program descriptors become references to loaded programs (the runtime supplies
// one). Besides get/put it tells a program's type (the map's owner check) and its id (what a
// consumer's lookup returns, as the kernel returns prog->aux->id).
class ProgResolver : public FdResolver {
 public:
  virtual std::uint32_t prog_type(void* program) = 0;
  virtual std::uint32_t prog_id(void* program) = 0;
};

class Map {
 public:
  // Validates the spec as map_create() does (sizes, flags, max_entries) and allocates all
  // storage up front, so the program side never allocates. `resolver` is required for
  // PERF_EVENT_ARRAY, `programs` for PROG_ARRAY, `maps` for ARRAY_OF_MAPS and HASH_OF_MAPS
  // (its objects are `Map*`, see map_in_map.hpp); each is ignored otherwise. A CGROUP_ARRAY
  // resolves its cgroup descriptors itself (cgroup_array.hpp).
  static Expected<std::unique_ptr<Map>> create(const MapSpec& spec,
                                               std::shared_ptr<FdResolver> resolver = nullptr,
                                               std::shared_ptr<ProgResolver> programs = nullptr,
                                               std::shared_ptr<FdResolver> maps = nullptr);
  virtual ~Map() = default;
  const MapSpec& spec() const { return spec_; }
  // A process-unique id (the kernel's map->id: what a consumer's lookup of a map-in-map gives).
  std::uint32_t id() const { return id_; }

  // ---- program side: SIGNAL-SAFE, no allocation; reentrant (a nested run on the same thread
  // may get -EBUSY where the kernel's bucket lock would). Per-CPU maps act on the current CPU.
  virtual void* lookup(const void* key) = 0;  // nullptr: none
  virtual long update(const void* key, const void* value, std::uint64_t flags) = 0;  // 0/-errno
  virtual long remove(const void* key) = 0;
  // PERF_EVENT_ARRAY, PROG_ARRAY, ARRAY_OF_MAPS, CGROUP_ARRAY: the resolved object at index, or
  // nullptr.
  virtual void* object_at(std::uint32_t index) {
    (void)index;
    return nullptr;
  }

  // ---- consumer side (bpf() semantics); each returns 0 or -errno.
  virtual int lookup_elem(const void* key, void* value) = 0;
  virtual int update_elem(const void* key, const void* value, std::uint64_t flags) = 0;
  virtual int delete_elem(const void* key) = 0;
  virtual int get_next_key(const void* key /* nullptr: the first */, void* next_key) = 0;

  // The bytes a value takes in lookup_elem/update_elem (nr_cpus slots for per-CPU maps).
  std::uint32_t user_value_size() const;
  // Memory programs may touch through pointers this map hands out (the interpreter's regions).
  virtual MemoryRegion value_region() const = 0;

 protected:
  explicit Map(const MapSpec& spec);
  MapSpec spec_;

 private:
  std::uint32_t id_;
};

// The possible CPUs (per-CPU slots, the default PERF_EVENT_ARRAY size) and the current one.
std::uint32_t possible_cpus();
std::uint32_t current_cpu();  // SIGNAL-SAFE

}  // namespace userperf::bpf
