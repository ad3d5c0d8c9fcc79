#include <gtest/gtest.h>

#include <cstring>

#include "map_test_util.hpp"

namespace userperf::bpf {
namespace {

using namespace test;

TEST(ArrayMap, ConsumerSemantics) {
  auto map = create_ok(make_spec(BPF_MAP_TYPE_ARRAY, 4, 8, 4));
  ASSERT_NE(map, nullptr);
  std::uint64_t value = 1;
  EXPECT_EQ(get(*map, 2, value), 0);
  EXPECT_EQ(value, 0u);  // preallocated, zeroed
  EXPECT_EQ(put(*map, 2, 42), 0);
  EXPECT_EQ(put(*map, 2, 43, BPF_EXIST), 0);
  EXPECT_EQ(put(*map, 2, 44, BPF_NOEXIST), -EEXIST);
  EXPECT_EQ(get(*map, 2, value), 0);
  EXPECT_EQ(value, 43u);
  EXPECT_EQ(put(*map, 4, 1), -E2BIG);
  EXPECT_EQ(get(*map, 4, value), -ENOENT);
  EXPECT_EQ(put(*map, 1, 1, BPF_F_LOCK), -EINVAL);
  EXPECT_EQ(put(*map, 1, 1, 8), -EINVAL);
  EXPECT_EQ(del(*map, 1), -EINVAL);
  EXPECT_EQ(map->user_value_size(), 8u);
}

TEST(ArrayMap, GetNextKey) {
  auto map = create_ok(make_spec(BPF_MAP_TYPE_ARRAY, 4, 4, 3));
  ASSERT_NE(map, nullptr);
  std::uint32_t next = 99;
  EXPECT_EQ(map->get_next_key(nullptr, &next), 0);
  EXPECT_EQ(next, 0u);
  std::uint32_t key = 1;
  EXPECT_EQ(map->get_next_key(&key, &next), 0);
  EXPECT_EQ(next, 2u);
  key = 2;
  EXPECT_EQ(map->get_next_key(&key, &next), -ENOENT);
  key = 100;
  EXPECT_EQ(map->get_next_key(&key, &next), 0);
  EXPECT_EQ(next, 0u);
  EXPECT_EQ(all_keys(*map), (std::vector<std::uint32_t>{0, 1, 2}));
}

TEST(ArrayMap, ProgramSideUpdatesInPlace) {
  auto map = create_ok(make_spec(BPF_MAP_TYPE_ARRAY, 4, 12, 2));
  ASSERT_NE(map, nullptr);
  std::uint32_t key = 1;
  auto* value = static_cast<std::uint8_t*>(map->lookup(&key));
  ASSERT_NE(value, nullptr);
  MemoryRegion region = map->value_region();
  EXPECT_TRUE(region.writable);
  EXPECT_GE(reinterpret_cast<std::uintptr_t>(value), region.begin);
  EXPECT_LE(reinterpret_cast<std::uintptr_t>(value) + 12, region.end);
  const std::uint8_t bytes[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  EXPECT_EQ(map->update(&key, bytes, BPF_ANY), 0);
  EXPECT_EQ(std::memcmp(value, bytes, 12), 0);  // the pointer sees updates: same storage
  EXPECT_EQ(map->update(&key, bytes, BPF_NOEXIST), -EEXIST);
  EXPECT_EQ(map->update(&key, bytes, BPF_F_LOCK), -EINVAL);
  key = 2;
  EXPECT_EQ(map->lookup(&key), nullptr);
  EXPECT_EQ(map->update(&key, bytes, BPF_ANY), -E2BIG);
  EXPECT_EQ(map->remove(&key), -EINVAL);
}

TEST(ArrayMap, PerCpuSlots) {
  const std::uint32_t cpus = possible_cpus();
  auto map = create_ok(make_spec(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 4, 2));
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(map->user_value_size(), 8 * cpus);
  std::vector<std::uint8_t> values(8 * cpus);
  for (std::uint32_t cpu = 0; cpu < cpus; ++cpu) {
    std::uint32_t v = 100 + cpu;
    std::memcpy(values.data() + 8 * cpu, &v, 4);
  }
  std::uint32_t key = 1;
  ASSERT_EQ(map->update_elem(&key, values.data(), BPF_ANY), 0);
  std::vector<std::uint8_t> read(8 * cpus, 0xff);
  ASSERT_EQ(map->lookup_elem(&key, read.data()), 0);
  EXPECT_EQ(read, values);
  // The program side sees the current CPU's slot.
  auto* mine = static_cast<std::uint32_t*>(map->lookup(&key));
  ASSERT_NE(mine, nullptr);
  EXPECT_GE(*mine, 100u);
  EXPECT_LT(*mine, 100 + cpus);
  std::uint32_t nine = 9;
  EXPECT_EQ(map->update(&key, &nine, BPF_ANY), 0);
  ASSERT_EQ(map->lookup_elem(&key, read.data()), 0);
  int nines = 0;
  for (std::uint32_t cpu = 0; cpu < cpus; ++cpu) {
    std::uint32_t v;
    std::memcpy(&v, read.data() + 8 * cpu, 4);
    nines += v == 9;
  }
  EXPECT_EQ(nines, 1);  // exactly one CPU's slot changed
  EXPECT_EQ(map->delete_elem(&key), -EINVAL);
}

TEST(ArrayMap, AccessFlags) {
  auto rdonly = create_ok(make_spec(BPF_MAP_TYPE_ARRAY, 4, 8, 1, BPF_F_RDONLY));
  ASSERT_NE(rdonly, nullptr);
  std::uint64_t value = 0;
  EXPECT_EQ(put(*rdonly, 0, 1), -EPERM);
  EXPECT_EQ(get(*rdonly, 0, value), 0);
  auto wronly = create_ok(make_spec(BPF_MAP_TYPE_ARRAY, 4, 8, 1, BPF_F_WRONLY));
  ASSERT_NE(wronly, nullptr);
  EXPECT_EQ(put(*wronly, 0, 1), 0);
  EXPECT_EQ(get(*wronly, 0, value), -EPERM);
  std::uint32_t next;
  EXPECT_EQ(wronly->get_next_key(nullptr, &next), -EPERM);
}

}  // namespace
}  // namespace userperf::bpf
