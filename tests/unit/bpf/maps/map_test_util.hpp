// Helpers shared by the map tests: specs and typed wrappers over the byte-pointer interface.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bpf/maps/map.hpp"

namespace userperf::bpf::test {

inline MapSpec make_spec(std::uint32_t type, std::uint32_t key_size, std::uint32_t value_size,
                         std::uint32_t max_entries, std::uint32_t flags = 0) {
  MapSpec spec;
  spec.name = "test_map";
  spec.type = type;
  spec.key_size = key_size;
  spec.value_size = value_size;
  spec.max_entries = max_entries;
  spec.map_flags = flags;
  return spec;
}

inline std::unique_ptr<Map> create_ok(const MapSpec& spec,
                                      std::shared_ptr<FdResolver> resolver = nullptr) {
  auto map = Map::create(spec, std::move(resolver));
  EXPECT_TRUE(map.ok()) << (map.ok() ? "" : map.error().message);
  return map.ok() ? std::move(map.value()) : nullptr;
}

// Resolves no descriptor: enough to create a PERF_EVENT_ARRAY.
class NoFdResolver : public FdResolver {
 public:
  Expected<void*> get(int fd) override {
    return make_error(EBADF, "no descriptor " + std::to_string(fd));
  }
  void put(void*) override {}
};

// Resolves no program descriptor: enough to create a PROG_ARRAY.
class NoProgResolver : public ProgResolver {
 public:
  Expected<void*> get(int fd) override {
    return make_error(EBADF, "no program descriptor " + std::to_string(fd));
  }
  void put(void*) override {}
  std::uint32_t prog_type(void*) override { return 0; }
  std::uint32_t prog_id(void*) override { return 0; }
};

inline int create_errno(const MapSpec& spec) {
  auto map =
      Map::create(spec, std::make_shared<NoFdResolver>(), std::make_shared<NoProgResolver>());
  return map.ok() ? 0 : map.error().code;
}

// Consumer-side u32 -> u64 helpers.
inline int put(Map& map, std::uint32_t key, std::uint64_t value, std::uint64_t flags = BPF_ANY) {
  return map.update_elem(&key, &value, flags);
}
inline int get(Map& map, std::uint32_t key, std::uint64_t& value) {
  return map.lookup_elem(&key, &value);
}
inline int del(Map& map, std::uint32_t key) {
  return map.delete_elem(&key);
}

// Every key get_next_key yields from the start, in order.
inline std::vector<std::uint32_t> all_keys(Map& map) {
  std::vector<std::uint32_t> keys;
  std::uint32_t key = 0;
  const std::uint32_t* previous = nullptr;
  std::uint32_t next = 0;
  while (map.get_next_key(previous, &next) == 0) {
    keys.push_back(next);
    key = next;
    previous = &key;
    if (keys.size() > 1'000'000) break;  // a cycle would be a bug; stop rather than hang
  }
  return keys;
}

}  // namespace userperf::bpf::test
