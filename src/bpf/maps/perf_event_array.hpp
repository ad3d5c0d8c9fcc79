// BPF_MAP_TYPE_PERF_EVENT_ARRAY (arraymap.c's fd arrays): a consumer stores a descriptor, the map
// keeps the object the FdResolver resolves it to, and bpf_perf_event_output finds it with
// object_at(). Slots are swapped atomically, so object_at() is SIGNAL-SAFE. The kernel frees an
// overwritten or deleted event only after an RCU grace period; here the resolver's put() is
// called at once, so a resolver must keep an object usable by a program that fetched it before
// (the perf binding defers the release past its output grace period).
#pragma once

#include <atomic>

#include "bpf/maps/map.hpp"
#include "bpf/maps/value_storage.hpp"

namespace userperf::bpf {

class PerfEventArray final : public Map {
 public:
  // `spec` has passed check_map_create(); `resolver` must not be null.
  static Expected<std::unique_ptr<Map>> create(const MapSpec& spec,
                                               std::shared_ptr<FdResolver> resolver);
  ~PerfEventArray() override;

  void* lookup(const void* key) override;  // always nullptr: programs cannot read descriptors
  long update(const void* key, const void* value, std::uint64_t flags) override;  // -EOPNOTSUPP
  long remove(const void* key) override;                                          // -EOPNOTSUPP
  void* object_at(std::uint32_t index) override;

  int lookup_elem(const void* key, void* value) override;  // -ENOTSUPP, as the kernel
  int update_elem(const void* key, const void* value, std::uint64_t flags) override;
  int delete_elem(const void* key) override;
  int get_next_key(const void* key, void* next_key) override;

  MemoryRegion value_region() const override { return {}; }

 private:
  PerfEventArray(const MapSpec& spec, std::shared_ptr<FdResolver> resolver, ValueStorage slots);
  std::atomic_ref<void*> slot(std::uint32_t index) const;

  std::shared_ptr<FdResolver> resolver_;
  ValueStorage slots_;  // max_entries object pointers, null when empty
};

}  // namespace userperf::bpf
