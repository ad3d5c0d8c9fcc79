// userperf_bpf_object_*: libbpf's open / bpf_map__set_* / load sequence over the ELF loader's
// image. The handle holds the image until the load, when the image goes to the process-wide
// registry (maps created, program verified) exactly as userperf_bpf_prog_load's does. In the
// `userperf` library beside bpf_load_api.cpp, for the same reason: it reads ELF objects.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "api/engine_instance.hpp"
#include "bpf/loader/elf_loader.hpp"
#include "bpf/perf/bpf_registry.hpp"
#include "support/expected.hpp"
#include "userperf/userperf.h"

struct userperf_bpf_object {
  userperf::bpf::ObjectImage image;
  bool load_attempted = false;  // libbpf's obj->loaded: set by the first load, however it ends
};

namespace {

using userperf::bpf::MapSpec;

void copy_log(const std::string& log, char* log_buf, size_t log_size) {
  if (log_buf == nullptr || log_size == 0) return;
  const std::size_t n = std::min(log.size(), log_size - 1);
  std::memcpy(log_buf, log.data(), n);
  log_buf[n] = '\0';
}

template <class Image>  // ObjectImage or const ObjectImage
auto find_map(Image& image, const char* name) -> decltype(&image.maps.front()) {
  const auto it = std::find_if(image.maps.begin(), image.maps.end(),
                               [&](const MapSpec& spec) { return spec.name == name; });
  return it == image.maps.end() ? nullptr : &*it;
}

// The checks bpf_map__set_* make before changing a map (libbpf: -EBUSY once loaded), then the
// change. Global data keeps its section's layout: its value is the section's bytes.
int set_map_field(userperf_bpf_object* obj, const char* map, std::uint32_t MapSpec::*field,
                  std::uint32_t value) {
  if (obj == nullptr || map == nullptr) return userperf::syscall_return(-EINVAL);
  MapSpec* spec = find_map(obj->image, map);
  if (spec == nullptr) return userperf::syscall_return(-ENOENT);
  if (obj->load_attempted) return userperf::syscall_return(-EBUSY);
  if (spec->global_data) return userperf::syscall_return(-EINVAL);
  spec->*field = value;
  return 0;
}

}  // namespace

extern "C" {

userperf_bpf_object* userperf_bpf_object_open(const char* path) {
  if (path == nullptr) {
    errno = EINVAL;
    return nullptr;
  }
  auto image = userperf::bpf::load_elf_file(path);
  if (!image) {
    errno = image.error().code;
    return nullptr;
  }
  return new userperf_bpf_object{std::move(*image), false};
}

int userperf_bpf_object_set_map_max_entries(userperf_bpf_object* obj, const char* map,
                                            uint32_t max_entries) {
  return set_map_field(obj, map, &MapSpec::max_entries, max_entries);
}

int userperf_bpf_object_set_map_value_size(userperf_bpf_object* obj, const char* map,
                                           uint32_t value_size) {
  return set_map_field(obj, map, &MapSpec::value_size, value_size);
}

int userperf_bpf_object_set_map_key_size(userperf_bpf_object* obj, const char* map,
                                         uint32_t key_size) {
  return set_map_field(obj, map, &MapSpec::key_size, key_size);
}

int userperf_bpf_object_set_map_inner_map(userperf_bpf_object* obj, const char* map, uint32_t type,
                                          uint32_t key_size, uint32_t value_size,
                                          uint32_t max_entries, uint32_t map_flags) {
  if (obj == nullptr || map == nullptr) return userperf::syscall_return(-EINVAL);
  MapSpec* spec = find_map(obj->image, map);
  if (spec == nullptr) return userperf::syscall_return(-ENOENT);
  if (obj->load_attempted) return userperf::syscall_return(-EBUSY);
  MapSpec inner;
  inner.type = type;
  inner.key_size = key_size;
  inner.value_size = value_size;
  inner.max_entries = max_entries;
  inner.map_flags = map_flags;
  // libbpf: "map '%s': inner map fd can only be set for map-in-map" (EINVAL).
  if (!userperf::bpf::set_inner_map_template(*spec, std::move(inner))) {
    return userperf::syscall_return(-EINVAL);
  }
  return 0;
}

int userperf_bpf_object_set_map_initial_value(userperf_bpf_object* obj, const char* map,
                                              const void* data, size_t size) {
  if (obj == nullptr || map == nullptr || (data == nullptr && size != 0)) {
    return userperf::syscall_return(-EINVAL);
  }
  MapSpec* spec = find_map(obj->image, map);
  if (spec == nullptr) return userperf::syscall_return(-ENOENT);
  if (obj->load_attempted) return userperf::syscall_return(-EBUSY);
  // libbpf: only maps with an initial value (its mmaped internal maps), of exactly their size.
  if (!spec->global_data || size != spec->value_size) return userperf::syscall_return(-EINVAL);
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  spec->initial_value.assign(bytes, bytes + size);
  return 0;
}

int userperf_bpf_object_map_info(const userperf_bpf_object* obj, const char* map,
                                 uint32_t* key_size, uint32_t* value_size, uint32_t* max_entries) {
  if (obj == nullptr || map == nullptr) return userperf::syscall_return(-EINVAL);
  const MapSpec* spec = find_map(obj->image, map);
  if (spec == nullptr) return userperf::syscall_return(-ENOENT);
  if (key_size != nullptr) *key_size = spec->key_size;
  if (value_size != nullptr) *value_size = spec->value_size;
  if (max_entries != nullptr) *max_entries = spec->max_entries;
  return 0;
}

int userperf_bpf_object_load(userperf_bpf_object* obj, const char* prog_name, char* log_buf,
                             size_t log_size) {
  std::string log;
  int rc = -EINVAL;
  if (obj == nullptr) {
    log = "no object";
  } else if (obj->load_attempted) {
    log = "the object was loaded already: a load cannot be attempted twice";
  } else {
    obj->load_attempted = true;
    rc = userperf::api::bpf_registry().load_program(obj->image, prog_name ? prog_name : "", &log);
  }
  copy_log(log, log_buf, log_size);
  return userperf::syscall_return(rc);
}

void userperf_bpf_object_close(userperf_bpf_object* obj) {
  delete obj;
}

}  // extern "C"
