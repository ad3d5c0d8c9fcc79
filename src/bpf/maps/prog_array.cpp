#include "bpf/maps/prog_array.hpp"

#include <cstring>

#include "bpf/maps/array_map.hpp"
#include "bpf/maps/map_access.hpp"

namespace userperf::bpf {

Expected<std::unique_ptr<Map>> ProgArray::create(const MapSpec& spec,
                                                 std::shared_ptr<ProgResolver> programs) {
  auto slots = ValueStorage::allocate(std::uint64_t{spec.max_entries} * sizeof(void*));
  if (!slots) return slots.error();
  return std::unique_ptr<Map>(new ProgArray(spec, std::move(programs), std::move(slots.value())));
}

ProgArray::ProgArray(const MapSpec& spec, std::shared_ptr<ProgResolver> programs,
                     ValueStorage slots)
    : Map(spec), programs_(std::move(programs)), slots_(std::move(slots)) {}

std::atomic_ref<void*> ProgArray::slot(std::uint32_t index) const {
  return std::atomic_ref<void*>(reinterpret_cast<void**>(slots_.data())[index]);
}

ProgArray::~ProgArray() {
  for (std::uint32_t i = 0; i < spec_.max_entries; ++i) {
    if (void* program = slot(i).exchange(nullptr, std::memory_order_acq_rel)) {
      programs_->put(program);
    }
  }
}

void* ProgArray::lookup(const void* key) {
  (void)key;
  return nullptr;
}

long ProgArray::update(const void* key, const void* value, std::uint64_t flags) {
  (void)key, (void)value, (void)flags;
  return -EOPNOTSUPP;
}

long ProgArray::remove(const void* key) {
  (void)key;
  return -EOPNOTSUPP;
}

void* ProgArray::object_at(std::uint32_t index) {
  if (index >= spec_.max_entries) return nullptr;
  return slot(index).load(std::memory_order_acquire);
}

int ProgArray::lookup_elem(const void* key, void* value) {
  if (int err = check_consumer_read(spec_)) return err;
  std::uint32_t index;
  std::memcpy(&index, key, sizeof(index));
  if (index >= spec_.max_entries) return -ENOENT;
  // bpf_fd_array_map_lookup_elem: the program's id, ENOENT for an empty slot.
  void* program = slot(index).load(std::memory_order_acquire);
  if (program == nullptr) return -ENOENT;
  const std::uint32_t id = programs_->prog_id(program);
  std::memcpy(value, &id, sizeof(id));
  return 0;
}

int ProgArray::update_elem(const void* key, const void* value, std::uint64_t flags) {
  if (int err = check_consumer_write(spec_)) return err;
  if (flags != BPF_ANY) return -EINVAL;
  std::uint32_t index;
  std::memcpy(&index, key, sizeof(index));
  if (index >= spec_.max_entries) return -E2BIG;
  std::uint32_t fd;
  std::memcpy(&fd, value, sizeof(fd));
  if (fd > 0x7fffffffu) return -EBADF;
  Expected<void*> program = programs_->get(static_cast<int>(fd));
  if (!program) return -(program.error().code > 0 ? program.error().code : EINVAL);
  // prog_fd_array_get_ptr -> bpf_prog_map_compatible: the first program sets the owner type.
  const std::uint32_t type = programs_->prog_type(program.value());
  std::uint32_t owner = 0;
  if (!owner_type_.compare_exchange_strong(owner, type, std::memory_order_acq_rel) &&
      owner != type) {
    programs_->put(program.value());
    return -EINVAL;
  }
  if (void* old = slot(index).exchange(program.value(), std::memory_order_acq_rel)) {
    programs_->put(old);
  }
  return 0;
}

int ProgArray::delete_elem(const void* key) {
  if (int err = check_consumer_write(spec_)) return err;
  std::uint32_t index;
  std::memcpy(&index, key, sizeof(index));
  if (index >= spec_.max_entries) return -E2BIG;
  void* old = slot(index).exchange(nullptr, std::memory_order_acq_rel);
  if (old == nullptr) return -ENOENT;
  programs_->put(old);
  return 0;
}

int ProgArray::get_next_key(const void* key, void* next_key) {
  if (int err = check_consumer_read(spec_)) return err;
  return array_get_next_key(spec_.max_entries, key, next_key);
}

}  // namespace userperf::bpf
