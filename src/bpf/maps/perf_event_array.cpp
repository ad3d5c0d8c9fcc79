#include "bpf/maps/perf_event_array.hpp"

#include <cstring>

#include "bpf/maps/array_map.hpp"
#include "bpf/maps/map_access.hpp"
#include "bpf/maps/map_create_check.hpp"

namespace userperf::bpf {

Expected<std::unique_ptr<Map>> PerfEventArray::create(const MapSpec& spec,
                                                      std::shared_ptr<FdResolver> resolver) {
  auto slots = ValueStorage::allocate(std::uint64_t{spec.max_entries} * sizeof(void*));
  if (!slots) return slots.error();
  return std::unique_ptr<Map>(
      new PerfEventArray(spec, std::move(resolver), std::move(slots.value())));
}

PerfEventArray::PerfEventArray(const MapSpec& spec, std::shared_ptr<FdResolver> resolver,
                               ValueStorage slots)
    : Map(spec), resolver_(std::move(resolver)), slots_(std::move(slots)) {}

std::atomic_ref<void*> PerfEventArray::slot(std::uint32_t index) const {
  return std::atomic_ref<void*>(reinterpret_cast<void**>(slots_.data())[index]);
}

PerfEventArray::~PerfEventArray() {
  for (std::uint32_t i = 0; i < spec_.max_entries; ++i) {
    if (void* object = slot(i).exchange(nullptr, std::memory_order_acq_rel)) {
      resolver_->put(object);
    }
  }
}

void* PerfEventArray::lookup(const void* key) {
  (void)key;
  return nullptr;
}

long PerfEventArray::update(const void* key, const void* value, std::uint64_t flags) {
  (void)key, (void)value, (void)flags;
  return -EOPNOTSUPP;  // the verifier allows only output helpers on this map
}

long PerfEventArray::remove(const void* key) {
  (void)key;
  return -EOPNOTSUPP;  // and put() need not be signal-safe
}

void* PerfEventArray::object_at(std::uint32_t index) {
  if (index >= spec_.max_entries) return nullptr;
  return slot(index).load(std::memory_order_acquire);
}

int PerfEventArray::lookup_elem(const void* key, void* value) {
  (void)key, (void)value;
  if (int err = check_consumer_read(spec_)) return err;
  // bpf_fd_array_map_lookup_elem: perf event arrays have no map_fd_sys_lookup_elem.
  return -kEnotsupp;
}

int PerfEventArray::update_elem(const void* key, const void* value, std::uint64_t flags) {
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
  if (void* old = slot(index).exchange(object.value(), std::memory_order_acq_rel)) {
    resolver_->put(old);
  }
  return 0;
}

int PerfEventArray::delete_elem(const void* key) {
  if (int err = check_consumer_write(spec_)) return err;
  std::uint32_t index;
  std::memcpy(&index, key, sizeof(index));
  if (index >= spec_.max_entries) return -E2BIG;
  void* old = slot(index).exchange(nullptr, std::memory_order_acq_rel);
  if (old == nullptr) return -ENOENT;
  resolver_->put(old);
  return 0;
}

int PerfEventArray::get_next_key(const void* key, void* next_key) {
  if (int err = check_consumer_read(spec_)) return err;
  return array_get_next_key(spec_.max_entries, key, next_key);
}

}  // namespace userperf::bpf
