// BPF_MAP_TYPE_ARRAY and BPF_MAP_TYPE_PERCPU_ARRAY (arraymap.c), and global data (.data, .rodata,
// .bss: one-entry arrays). Every element exists from create on and is updated in place, so the
// program side needs no lock: lookup is an index computation, update a copy.
#pragma once

#include "bpf/maps/map.hpp"
#include "bpf/maps/value_storage.hpp"

namespace userperf::bpf {

class ArrayMap final : public Map {
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
  ArrayMap(const MapSpec& spec, ValueStorage storage, std::uint32_t cpus);
  std::uint8_t* slot(std::uint32_t index, std::uint32_t cpu) const;
  // The index a key names, or max_entries when out of range.
  std::uint32_t index_of(const void* key) const;

  ValueStorage storage_;
  std::uint32_t cpus_;       // value slots per element: possible_cpus() when per-CPU, else 1
  std::uint32_t elem_size_;  // round_up(value_size, 8)
};

// The array semantics of get_next_key (arraymap.c), shared with the descriptor arrays: no key or
// an out-of-range key gives 0, the last index -ENOENT.
int array_get_next_key(std::uint32_t max_entries, const void* key, void* next_key);

}  // namespace userperf::bpf
