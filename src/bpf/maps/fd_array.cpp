#include "bpf/maps/fd_array.hpp"

#include <cstring>

#include "bpf/maps/array_map.hpp"
#include "bpf/maps/map_access.hpp"

namespace userperf::bpf {

Expected<ValueStorage> FdArray::allocate_slots(const MapSpec& spec) {
  return ValueStorage::allocate(std::uint64_t{spec.max_entries} * sizeof(void*));
}

FdArray::FdArray(const MapSpec& spec, std::shared_ptr<FdResolver> resolver, ValueStorage slots)
    : Map(spec), resolver_(std::move(resolver)), slots_(std::move(slots)) {}

std::atomic_ref<void*> FdArray::slot(std::uint32_t index) const {
  return std::atomic_ref<void*>(reinterpret_cast<void**>(slots_.data())[index]);
}

FdArray::~FdArray() {
  const std::uint32_t end = stored_end_.load(std::memory_order_acquire);
  for (std::uint32_t i = 0; i < end; ++i) {
    // A load first: an empty slot's page is read (the zero page), not written.
    if (slot(i).load(std::memory_order_acquire) == nullptr) continue;
    if (void* object = slot(i).exchange(nullptr, std::memory_order_acq_rel)) {
      resolver_->put(object);
    }
  }
}

void* FdArray::lookup(const void* key) {
  if (!lookup_gives_object()) return nullptr;
  std::uint32_t index;
  std::memcpy(&index, key, sizeof(index));
  return object_at(index);
}

long FdArray::update(const void* key, const void* value, std::uint64_t flags) {
  (void)key, (void)value, (void)flags;
  return -EOPNOTSUPP;
}

long FdArray::remove(const void* key) {
  (void)key;
  return -EOPNOTSUPP;
}

void* FdArray::object_at(std::uint32_t index) {
  if (index >= spec_.max_entries) return nullptr;
  return slot(index).load(std::memory_order_acquire);
}

int FdArray::lookup_elem(const void* key, void* value) {
  if (int err = check_consumer_read(spec_)) return err;
  if (!has_sys_lookup()) return -kEnotsupp;  // bpf_fd_array_map_lookup_elem
  std::uint32_t index;
  std::memcpy(&index, key, sizeof(index));
  if (index >= spec_.max_entries) return -ENOENT;
  void* object = slot(index).load(std::memory_order_acquire);
  if (object == nullptr) return -ENOENT;
  const std::uint32_t answer = sys_lookup(object);
  std::memcpy(value, &answer, sizeof(answer));
  return 0;
}

int FdArray::update_elem(const void* key, const void* value, std::uint64_t flags) {
  if (int err = check_consumer_write(spec_)) return err;
  if (flags != BPF_ANY) return -EINVAL;
  std::uint32_t index;
  std::memcpy(&index, key, sizeof(index));
  if (index >= spec_.max_entries) return -E2BIG;
  std::uint32_t fd;
  std::memcpy(&fd, value, sizeof(fd));
  // The descriptor is a u32 in the ABI; one that is not a valid int is EBADF as fdget() gives.
  if (fd > 0x7fffffffu) return -EBADF;
  Expected<void*> object = resolver_->get(static_cast<int>(fd));
  if (!object) return -(object.error().code > 0 ? object.error().code : EINVAL);
  if (int err = check_storable(object.value())) {
    resolver_->put(object.value());
    return err;
  }
  if (void* old = slot(index).exchange(object.value(), std::memory_order_acq_rel)) {
    resolver_->put(old);
  }
  std::uint32_t end = stored_end_.load(std::memory_order_relaxed);
  while (end <= index &&
         !stored_end_.compare_exchange_weak(end, index + 1, std::memory_order_acq_rel)) {
  }
  return 0;
}

int FdArray::delete_elem(const void* key) {
  if (int err = check_consumer_write(spec_)) return err;
  std::uint32_t index;
  std::memcpy(&index, key, sizeof(index));
  if (index >= spec_.max_entries) return -E2BIG;
  void* old = slot(index).exchange(nullptr, std::memory_order_acq_rel);
  if (old == nullptr) return -ENOENT;
  resolver_->put(old);
  return 0;
}

int FdArray::get_next_key(const void* key, void* next_key) {
  if (int err = check_consumer_read(spec_)) return err;
  return array_get_next_key(spec_.max_entries, key, next_key);
}

}  // namespace userperf::bpf
