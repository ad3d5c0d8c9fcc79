#include "bpf/maps/map_in_map.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>

#include "bpf/isa/shared_regions.hpp"
#include "bpf/maps/hash_map.hpp"
#include "bpf/maps/map_access.hpp"

namespace userperf::bpf {

bool inner_map_matches(const MapSpec& templ, const MapSpec& inner) {
  if (is_map_in_map(inner.type)) return false;
  if (templ.type != inner.type || templ.key_size != inner.key_size ||
      templ.value_size != inner.value_size || templ.map_flags != inner.map_flags) {
    return false;
  }
  const bool array = templ.type == BPF_MAP_TYPE_ARRAY || templ.type == BPF_MAP_TYPE_PERCPU_ARRAY;
  return !array || (templ.map_flags & BPF_F_INNER_MAP) || templ.max_entries == inner.max_entries;
}

Expected<std::unique_ptr<Map>> ArrayOfMaps::create(const MapSpec& spec,
                                                   std::shared_ptr<FdResolver> maps) {
  auto slots = allocate_slots(spec);
  if (!slots) return slots.error();
  return std::unique_ptr<Map>(new ArrayOfMaps(spec, std::move(maps), std::move(slots.value())));
}

ArrayOfMaps::ArrayOfMaps(const MapSpec& spec, std::shared_ptr<FdResolver> maps, ValueStorage slots)
    : FdArray(spec, std::move(maps), std::move(slots)) {}

namespace {

// bpf_map_meta_equal, then the inner map's values are made reachable by every run
// (shared_regions.hpp: it may belong to another object than the programs that look it up).
int check_inner_map(const MapSpec& outer, const Map& inner) {
  if (!inner_map_matches(*inner_map_template(outer), inner.spec())) return -EINVAL;
  return add_shared_region(inner.value_region()) ? 0 : -ENOMEM;
}

}  // namespace

int ArrayOfMaps::check_storable(void* map) {
  return check_inner_map(spec_, *static_cast<Map*>(map));
}

Expected<std::unique_ptr<Map>> HashOfMaps::create(const MapSpec& spec,
                                                  std::shared_ptr<FdResolver> maps) {
  MapSpec table_spec = spec;
  table_spec.type = BPF_MAP_TYPE_HASH;
  table_spec.value_size = sizeof(Map*);
  table_spec.inner_map.clear();
  auto table = HashMap::create(table_spec);
  if (!table) return table.error();
  return std::unique_ptr<Map>(new HashOfMaps(spec, std::move(maps), std::move(table.value())));
}

HashOfMaps::HashOfMaps(const MapSpec& spec, std::shared_ptr<FdResolver> maps,
                       std::unique_ptr<Map> table)
    : Map(spec), maps_(std::move(maps)), table_(std::move(table)) {}

HashOfMaps::~HashOfMaps() {
  std::vector<std::uint8_t> key(spec_.key_size);
  std::vector<std::uint8_t> next(spec_.key_size);
  bool first = true;
  while (table_->get_next_key(first ? nullptr : key.data(), next.data()) == 0) {
    if (Map* inner = stored(next.data())) maps_->put(inner);
    key.swap(next);
    first = false;
  }
}

// htab_of_map_lookup_elem: the element's value is the inner map, read once.
void* HashOfMaps::lookup(const void* key) {
  void* value = table_->lookup(key);
  if (value == nullptr) return nullptr;
  return std::atomic_ref<void*>(*static_cast<void**>(value)).load(std::memory_order_acquire);
}

long HashOfMaps::update(const void* key, const void* value, std::uint64_t flags) {
  (void)key, (void)value, (void)flags;
  return -EOPNOTSUPP;
}

long HashOfMaps::remove(const void* key) {
  (void)key;
  return -EOPNOTSUPP;
}

Map* HashOfMaps::stored(const void* key) {
  Map* inner = nullptr;
  if (table_->lookup_elem(key, &inner) != 0) return nullptr;
  return inner;
}

int HashOfMaps::lookup_elem(const void* key, void* value) {
  if (int err = check_consumer_read(spec_)) return err;
  std::lock_guard lock(consumers_);
  Map* inner = stored(key);
  if (inner == nullptr) return -ENOENT;
  const std::uint32_t id = inner->id();  // bpf_map_fd_sys_lookup_elem
  std::memcpy(value, &id, sizeof(id));
  return 0;
}

int HashOfMaps::update_elem(const void* key, const void* value, std::uint64_t flags) {
  if (int err = check_consumer_write(spec_)) return err;
  if (int err = check_update_flags(flags)) return err;
  std::uint32_t fd;
  std::memcpy(&fd, value, sizeof(fd));
  if (fd > 0x7fffffffu) return -EBADF;
  Expected<void*> object = maps_->get(static_cast<int>(fd));
  if (!object) return -(object.error().code > 0 ? object.error().code : EINVAL);
  auto* inner = static_cast<Map*>(object.value());
  if (int err = check_inner_map(spec_, *inner)) {
    maps_->put(inner);
    return err;
  }
  std::lock_guard lock(consumers_);
  // An existing key's map is exchanged atomically, as programs read it (lookup()); a new key
  // goes in through the hash map's insertion.
  if (void* slot = table_->lookup(key); slot != nullptr && flags != BPF_NOEXIST) {
    void* old = std::atomic_ref<void*>(*static_cast<void**>(slot))
                    .exchange(inner, std::memory_order_acq_rel);
    maps_->put(old);
    return 0;
  }
  if (int err = table_->update_elem(key, &inner, flags)) {
    maps_->put(inner);
    return err;
  }
  return 0;
}

int HashOfMaps::delete_elem(const void* key) {
  if (int err = check_consumer_write(spec_)) return err;
  std::lock_guard lock(consumers_);
  Map* old = stored(key);
  if (int err = table_->delete_elem(key)) return err;
  if (old != nullptr) maps_->put(old);
  return 0;
}

int HashOfMaps::get_next_key(const void* key, void* next_key) {
  if (int err = check_consumer_read(spec_)) return err;
  return table_->get_next_key(key, next_key);
}

}  // namespace userperf::bpf
