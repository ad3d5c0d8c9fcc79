// BPF_MAP_TYPE_PROG_ARRAY: an fd array of program references, which bpf_tail_call finds with
// object_at(). A consumer's lookup gives the program's id (the kernel's prog->aux->id).
//
// The map's owner is the program type of the first program stored (the kernel's
// bpf_prog_map_compatible also records it when a program using the map is loaded; userperf loads
// perf_event programs only, so the two cannot differ): a program of another type is EINVAL.
#pragma once

#include <atomic>

#include "bpf/maps/fd_array.hpp"

namespace userperf::bpf {

class ProgArray final : public FdArray {
 public:
  // `spec` has passed check_map_create(); `programs` must not be null.
  static Expected<std::unique_ptr<Map>> create(const MapSpec& spec,
                                               std::shared_ptr<ProgResolver> programs);

  // The program type that owns the map (0: none yet).
  std::uint32_t owner_type() const { return owner_type_.load(std::memory_order_acquire); }

 private:
  ProgArray(const MapSpec& spec, std::shared_ptr<ProgResolver> programs, ValueStorage slots);

  bool has_sys_lookup() const override { return true; }
  std::uint32_t sys_lookup(void* program) override { return programs_->prog_id(program); }
  int check_storable(void* program) override;

  std::shared_ptr<ProgResolver> programs_;  // the base's resolver, with the program queries
  std::atomic<std::uint32_t> owner_type_{0};
};

}  // namespace userperf::bpf
