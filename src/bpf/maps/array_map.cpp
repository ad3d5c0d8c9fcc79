#include "bpf/maps/array_map.hpp"

#include <cstring>

#include "bpf/maps/map_access.hpp"
#include "bpf/maps/map_create_check.hpp"

namespace userperf::bpf {

int array_get_next_key(std::uint32_t max_entries, const void* key, void* next_key) {
  std::uint32_t index = 0xffffffffu;
  if (key != nullptr) std::memcpy(&index, key, sizeof(index));
  std::uint32_t next = 0;
  if (index < max_entries) {
    if (index == max_entries - 1) return -ENOENT;
    next = index + 1;
  }
  std::memcpy(next_key, &next, sizeof(next));
  return 0;
}

Expected<std::unique_ptr<Map>> ArrayMap::create(const MapSpec& spec) {
  const std::uint32_t cpus = spec.type == BPF_MAP_TYPE_PERCPU_ARRAY ? possible_cpus() : 1;
  const std::uint64_t size =
      std::uint64_t{spec.max_entries} * cpus * std::uint64_t{round_up_8(spec.value_size)};
  auto storage = ValueStorage::allocate(size);
  if (!storage) return storage.error();
  if (spec.global_data && !spec.initial_value.empty()) {
    std::memcpy(storage->data(), spec.initial_value.data(), spec.initial_value.size());
  }
  return std::unique_ptr<Map>(new ArrayMap(spec, std::move(storage.value()), cpus));
}

ArrayMap::ArrayMap(const MapSpec& spec, ValueStorage storage, std::uint32_t cpus)
    : Map(spec),
      storage_(std::move(storage)),
      cpus_(cpus),
      elem_size_(round_up_8(spec.value_size)) {}

std::uint8_t* ArrayMap::slot(std::uint32_t index, std::uint32_t cpu) const {
  return storage_.data() + (std::size_t{index} * cpus_ + cpu) * elem_size_;
}

std::uint32_t ArrayMap::index_of(const void* key) const {
  std::uint32_t index;
  std::memcpy(&index, key, sizeof(index));
  return index < spec_.max_entries ? index : spec_.max_entries;
}

void* ArrayMap::lookup(const void* key) {
  std::uint32_t index = index_of(key);
  if (index == spec_.max_entries) return nullptr;
  return slot(index, cpus_ == 1 ? 0 : current_cpu() % cpus_);
}

long ArrayMap::update(const void* key, const void* value, std::uint64_t flags) {
  if (int err = check_program_write(spec_)) return err;
  if (int err = check_update_flags(flags)) return err;
  std::uint32_t index = index_of(key);
  if (index == spec_.max_entries) return -E2BIG;  // every element exists; none can be added
  if (flags == BPF_NOEXIST) return -EEXIST;
  std::memcpy(slot(index, cpus_ == 1 ? 0 : current_cpu() % cpus_), value, spec_.value_size);
  return 0;
}

long ArrayMap::remove(const void* key) {
  (void)key;
  return -EINVAL;  // array elements cannot be deleted
}

int ArrayMap::lookup_elem(const void* key, void* value) {
  if (int err = check_consumer_read(spec_)) return err;
  std::uint32_t index = index_of(key);
  if (index == spec_.max_entries) return -ENOENT;
  if (cpus_ == 1) {
    std::memcpy(value, slot(index, 0), spec_.value_size);
    return 0;
  }
  // bpf_percpu_array_copy: one round_up(value_size, 8) slot per possible CPU.
  auto* out = static_cast<std::uint8_t*>(value);
  for (std::uint32_t cpu = 0; cpu < cpus_; ++cpu) {
    std::memcpy(out + std::size_t{cpu} * elem_size_, slot(index, cpu), elem_size_);
  }
  return 0;
}

int ArrayMap::update_elem(const void* key, const void* value, std::uint64_t flags) {
  if (int err = check_consumer_write(spec_)) return err;
  if (int err = check_update_flags(flags)) return err;
  std::uint32_t index = index_of(key);
  if (index == spec_.max_entries) return -E2BIG;
  if (flags == BPF_NOEXIST) return -EEXIST;
  if (cpus_ == 1) {
    std::memcpy(slot(index, 0), value, spec_.value_size);
    return 0;
  }
  const auto* in = static_cast<const std::uint8_t*>(value);
  for (std::uint32_t cpu = 0; cpu < cpus_; ++cpu) {
    std::memcpy(slot(index, cpu), in + std::size_t{cpu} * elem_size_, elem_size_);
  }
  return 0;
}

int ArrayMap::delete_elem(const void* key) {
  if (int err = check_consumer_write(spec_)) return err;
  (void)key;
  return -EINVAL;
}

int ArrayMap::get_next_key(const void* key, void* next_key) {
  if (int err = check_consumer_read(spec_)) return err;
  return array_get_next_key(spec_.max_entries, key, next_key);
}

MemoryRegion ArrayMap::value_region() const {
  return storage_.region(!(spec_.map_flags & BPF_F_RDONLY_PROG));
}

}  // namespace userperf::bpf
