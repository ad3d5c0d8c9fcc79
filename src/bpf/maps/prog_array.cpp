#include "bpf/maps/prog_array.hpp"

#include <cerrno>

namespace userperf::bpf {

Expected<std::unique_ptr<Map>> ProgArray::create(const MapSpec& spec,
                                                 std::shared_ptr<ProgResolver> programs) {
  auto slots = allocate_slots(spec);
  if (!slots) return slots.error();
  return std::unique_ptr<Map>(new ProgArray(spec, std::move(programs), std::move(slots.value())));
}

ProgArray::ProgArray(const MapSpec& spec, std::shared_ptr<ProgResolver> programs,
                     ValueStorage slots)
    : FdArray(spec, programs, std::move(slots)), programs_(std::move(programs)) {}

// prog_fd_array_get_ptr -> bpf_prog_map_compatible: the first program sets the owner type.
int ProgArray::check_storable(void* program) {
  const std::uint32_t type = programs_->prog_type(program);
  std::uint32_t owner = 0;
  if (!owner_type_.compare_exchange_strong(owner, type, std::memory_order_acq_rel) &&
      owner != type) {
    return -EINVAL;
  }
  return 0;
}

}  // namespace userperf::bpf
