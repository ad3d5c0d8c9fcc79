// BPF_MAP_TYPE_PROG_ARRAY (arraymap.c's prog fd arrays): a consumer stores a program descriptor,
// the map keeps a reference to the program the ProgResolver resolves it to, and bpf_tail_call
// finds it with object_at(). Slots are swapped atomically, so object_at() is SIGNAL-SAFE; as for
// PERF_EVENT_ARRAY, the resolver's put() must keep a replaced program usable by a run that
// fetched it before (the kernel waits for an RCU grace period).
//
// The map's owner is the program type of the first program stored (the kernel's
// bpf_prog_map_compatible also records it when a program using the map is loaded; userperf loads
// perf_event programs only, so the two cannot differ): a program of another type is EINVAL.
#pragma once

#include <atomic>

#include "bpf/maps/map.hpp"
#include "bpf/maps/value_storage.hpp"

namespace userperf::bpf {

class ProgArray final : public Map {
 public:
  // `spec` has passed check_map_create(); `programs` must not be null.
  static Expected<std::unique_ptr<Map>> create(const MapSpec& spec,
                                               std::shared_ptr<ProgResolver> programs);
  ~ProgArray() override;

  void* lookup(const void* key) override;  // nullptr: the verifier allows only bpf_tail_call
  long update(const void* key, const void* value, std::uint64_t flags) override;  // -EOPNOTSUPP
  long remove(const void* key) override;                                          // -EOPNOTSUPP
  void* object_at(std::uint32_t index) override;

  int lookup_elem(const void* key, void* value) override;  // the program's id
  int update_elem(const void* key, const void* value, std::uint64_t flags) override;
  int delete_elem(const void* key) override;
  int get_next_key(const void* key, void* next_key) override;

  MemoryRegion value_region() const override { return {}; }

  // The program type that owns the map (0: none yet).
  std::uint32_t owner_type() const { return owner_type_.load(std::memory_order_acquire); }

 private:
  ProgArray(const MapSpec& spec, std::shared_ptr<ProgResolver> programs, ValueStorage slots);
  std::atomic_ref<void*> slot(std::uint32_t index) const;

  std::shared_ptr<ProgResolver> programs_;
  ValueStorage slots_;  // max_entries program references, null when empty
  std::atomic<std::uint32_t> owner_type_{0};
};

}  // namespace userperf::bpf
