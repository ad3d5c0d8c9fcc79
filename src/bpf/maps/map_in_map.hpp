// The kernel's map-in-map (map_in_map.c, arraymap.c's array_of_maps, hashtab.c's htab_of_maps):
// an outer map whose values are references to other maps. A consumer stores an inner map by its
// descriptor (a `MapResolver` turns it into the `Map*`); the map must match the outer map's
// template (bpf_map_meta_equal: EINVAL otherwise). A program's lookup gives the inner `Map*`
// itself, the same value a fixed-up lddw of a map loads, so every map helper takes it.
//
// Slots change atomically: a program's lookup (SIGNAL-SAFE) sees the old map or the new one. The
// kernel frees a replaced inner map after an RCU grace period; here the resolver's put() must keep
// it usable (the registry keeps it until it goes, as it keeps replaced programs).
#pragma once

#include <memory>
#include <mutex>

#include "bpf/maps/fd_array.hpp"

namespace userperf::bpf {

// bpf_map_meta_equal (and array_map_meta_equal): `inner` may go into a slot of an outer map whose
// template is `templ`: same type, key and value sizes and flags; arrays also the same max_entries
// unless the template has BPF_F_INNER_MAP. A map-in-map is never an inner map.
bool inner_map_matches(const MapSpec& templ, const MapSpec& inner);

// BPF_MAP_TYPE_ARRAY_OF_MAPS: an fd array of maps whose program-side lookup gives the inner map.
class ArrayOfMaps final : public FdArray {
 public:
  // `spec` has passed check_map_create() (it has a template); `maps` must not be null.
  static Expected<std::unique_ptr<Map>> create(const MapSpec& spec,
                                               std::shared_ptr<FdResolver> maps);

 private:
  ArrayOfMaps(const MapSpec& spec, std::shared_ptr<FdResolver> maps, ValueStorage slots);

  bool lookup_gives_object() const override { return true; }
  bool has_sys_lookup() const override { return true; }
  std::uint32_t sys_lookup(void* map) override { return static_cast<Map*>(map)->id(); }
  int check_storable(void* map) override;
};

// BPF_MAP_TYPE_HASH_OF_MAPS: a hash table (HashMap, 8-byte values: the inner Map*) whose
// consumer-side values are descriptors in and map ids out, as htab_of_maps'.
class HashOfMaps final : public Map {
 public:
  static Expected<std::unique_ptr<Map>> create(const MapSpec& spec,
                                               std::shared_ptr<FdResolver> maps);
  ~HashOfMaps() override;

  // Program side: lookup gives the inner map (or nullptr); the verifier lets programs only look
  // up an outer map, so update/remove are -EOPNOTSUPP.
  void* lookup(const void* key) override;
  long update(const void* key, const void* value, std::uint64_t flags) override;
  long remove(const void* key) override;

  int lookup_elem(const void* key, void* value) override;
  int update_elem(const void* key, const void* value, std::uint64_t flags) override;
  int delete_elem(const void* key) override;
  int get_next_key(const void* key, void* next_key) override;

  MemoryRegion value_region() const override { return {}; }

 private:
  HashOfMaps(const MapSpec& spec, std::shared_ptr<FdResolver> maps, std::unique_ptr<Map> table);
  Map* stored(const void* key);  // the inner map at key, nullptr: none

  std::shared_ptr<FdResolver> maps_;
  std::unique_ptr<Map> table_;  // key -> Map*
  std::mutex consumers_;        // a consumer's read-replace-put of a slot is one step
};

}  // namespace userperf::bpf
