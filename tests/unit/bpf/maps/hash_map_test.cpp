#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "map_test_util.hpp"

namespace userperf::bpf {
namespace {

using namespace test;

TEST(HashMap, ConsumerSemantics) {
  auto map = create_ok(make_spec(BPF_MAP_TYPE_HASH, 4, 8, 3));
  ASSERT_NE(map, nullptr);
  std::uint64_t value = 0;
  EXPECT_EQ(get(*map, 1, value), -ENOENT);
  EXPECT_EQ(put(*map, 1, 10, BPF_EXIST), -ENOENT);
  EXPECT_EQ(put(*map, 1, 10, BPF_NOEXIST), 0);
  EXPECT_EQ(put(*map, 1, 11, BPF_NOEXIST), -EEXIST);
  EXPECT_EQ(put(*map, 1, 12, BPF_EXIST), 0);
  EXPECT_EQ(get(*map, 1, value), 0);
  EXPECT_EQ(value, 12u);
  EXPECT_EQ(put(*map, 2, 20), 0);
  EXPECT_EQ(put(*map, 3, 30), 0);
  EXPECT_EQ(put(*map, 4, 40), -E2BIG);  // full: all preallocated elements in use
  EXPECT_EQ(put(*map, 3, 31), 0);       // an existing key still updates
  EXPECT_EQ(put(*map, 1, 1, BPF_F_LOCK), -EINVAL);
  EXPECT_EQ(put(*map, 1, 1, 3), -EINVAL);
  EXPECT_EQ(del(*map, 2), 0);
  EXPECT_EQ(del(*map, 2), -ENOENT);
  EXPECT_EQ(get(*map, 2, value), -ENOENT);
  EXPECT_EQ(put(*map, 4, 40), 0);  // the freed element is reused
  std::vector<std::uint32_t> keys = all_keys(*map);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::uint32_t>{1, 3, 4}));
}

TEST(HashMap, GetNextKeyOrderIsStableAndMissingKeyRestarts) {
  auto map = create_ok(make_spec(BPF_MAP_TYPE_HASH, 4, 4, 64));
  ASSERT_NE(map, nullptr);
  for (std::uint32_t k = 0; k < 40; ++k) {
    std::uint32_t v = k;
    ASSERT_EQ(map->update_elem(&k, &v, BPF_ANY), 0);
  }
  std::vector<std::uint32_t> first = all_keys(*map);
  EXPECT_EQ(first.size(), 40u);
  EXPECT_EQ(std::set<std::uint32_t>(first.begin(), first.end()).size(), 40u);
  EXPECT_EQ(all_keys(*map), first);
  std::uint32_t missing = 1000, next = 0;
  ASSERT_EQ(map->get_next_key(&missing, &next), 0);
  EXPECT_EQ(next, first.front());
  std::uint32_t last = first.back();
  EXPECT_EQ(map->get_next_key(&last, &next), -ENOENT);
  auto empty = create_ok(make_spec(BPF_MAP_TYPE_HASH, 4, 4, 4));
  EXPECT_EQ(empty->get_next_key(nullptr, &next), -ENOENT);
}

TEST(HashMap, WideKeysAndOddSizes) {
  auto map = create_ok(make_spec(BPF_MAP_TYPE_HASH, 13, 5, 8));
  ASSERT_NE(map, nullptr);
  std::uint8_t key_a[13] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
  std::uint8_t key_b[13] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14};
  std::uint8_t value_a[5] = {1, 1, 1, 1, 1}, value_b[5] = {2, 2, 2, 2, 2}, read[5];
  EXPECT_EQ(map->update_elem(key_a, value_a, BPF_ANY), 0);
  EXPECT_EQ(map->update_elem(key_b, value_b, BPF_ANY), 0);
  EXPECT_EQ(map->lookup_elem(key_a, read), 0);
  EXPECT_EQ(std::memcmp(read, value_a, 5), 0);
  EXPECT_EQ(map->lookup_elem(key_b, read), 0);
  EXPECT_EQ(std::memcmp(read, value_b, 5), 0);
  std::uint8_t next[13];
  ASSERT_EQ(map->get_next_key(nullptr, next), 0);
  EXPECT_TRUE(std::memcmp(next, key_a, 13) == 0 || std::memcmp(next, key_b, 13) == 0);
}

TEST(HashMap, ProgramSide) {
  auto map = create_ok(make_spec(BPF_MAP_TYPE_HASH, 4, 8, 2));
  ASSERT_NE(map, nullptr);
  std::uint32_t key = 7;
  std::uint64_t value = 70;
  EXPECT_EQ(map->lookup(&key), nullptr);
  EXPECT_EQ(map->update(&key, &value, BPF_EXIST), -ENOENT);
  EXPECT_EQ(map->update(&key, &value, BPF_ANY), 0);
  auto* stored = static_cast<std::uint64_t*>(map->lookup(&key));
  ASSERT_NE(stored, nullptr);
  EXPECT_EQ(*stored, 70u);
  MemoryRegion region = map->value_region();
  EXPECT_TRUE(region.writable);
  EXPECT_GE(reinterpret_cast<std::uintptr_t>(stored), region.begin);
  EXPECT_LE(reinterpret_cast<std::uintptr_t>(stored) + 8, region.end);
  *stored = 71;  // programs write through the pointer
  std::uint64_t read = 0;
  EXPECT_EQ(get(*map, 7, read), 0);
  EXPECT_EQ(read, 71u);
  value = 72;
  EXPECT_EQ(map->update(&key, &value, BPF_NOEXIST), -EEXIST);
  EXPECT_EQ(map->update(&key, &value, BPF_F_LOCK), -EINVAL);
  std::uint32_t other = 8, third = 9;
  EXPECT_EQ(map->update(&other, &value, BPF_ANY), 0);
  EXPECT_EQ(map->update(&third, &value, BPF_ANY), -E2BIG);
  EXPECT_EQ(map->remove(&key), 0);
  EXPECT_EQ(map->remove(&key), -ENOENT);
  EXPECT_EQ(map->lookup(&key), nullptr);
}

TEST(HashMap, ReadOnlyForPrograms) {
  auto map = create_ok(make_spec(BPF_MAP_TYPE_HASH, 4, 8, 2, BPF_F_RDONLY_PROG));
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(put(*map, 1, 5), 0);
  std::uint32_t key = 1;
  std::uint64_t value = 6;
  EXPECT_EQ(map->update(&key, &value, BPF_ANY), -EPERM);
  EXPECT_EQ(map->remove(&key), -EPERM);
  EXPECT_NE(map->lookup(&key), nullptr);
  EXPECT_FALSE(map->value_region().writable);
}

TEST(PercpuHashMap, Slots) {
  const std::uint32_t cpus = possible_cpus();
  auto map = create_ok(make_spec(BPF_MAP_TYPE_PERCPU_HASH, 4, 4, 4));
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(map->user_value_size(), 8 * cpus);
  std::vector<std::uint8_t> values(8 * cpus, 0);
  for (std::uint32_t cpu = 0; cpu < cpus; ++cpu)
    values[8 * cpu] = static_cast<std::uint8_t>(cpu + 1);
  std::uint32_t key = 3;
  ASSERT_EQ(map->update_elem(&key, values.data(), BPF_ANY), 0);
  std::vector<std::uint8_t> read(8 * cpus, 0xee);
  ASSERT_EQ(map->lookup_elem(&key, read.data()), 0);
  EXPECT_EQ(read, values);
  auto* mine = static_cast<std::uint32_t*>(map->lookup(&key));
  ASSERT_NE(mine, nullptr);
  EXPECT_GE(*mine, 1u);
  EXPECT_LE(*mine, cpus);

  // A new element from a program: its CPU's slot holds the value, every other slot is zero.
  std::uint32_t fresh = 4, value = 0x55;
  ASSERT_EQ(map->update(&fresh, &value, BPF_ANY), 0);
  ASSERT_EQ(map->lookup_elem(&fresh, read.data()), 0);
  int set = 0, zero = 0;
  for (std::uint32_t cpu = 0; cpu < cpus; ++cpu) {
    std::uint32_t v;
    std::memcpy(&v, read.data() + 8 * cpu, 4);
    set += v == 0x55;
    zero += v == 0;
  }
  EXPECT_EQ(set, 1);
  EXPECT_EQ(zero, static_cast<int>(cpus) - 1);
}

TEST(LruHashMap, EvictsWhenFull) {
  auto map = create_ok(make_spec(BPF_MAP_TYPE_LRU_HASH, 4, 8, 4));
  ASSERT_NE(map, nullptr);
  for (std::uint32_t k = 0; k < 4; ++k) ASSERT_EQ(put(*map, k, k), 0);
  // Key 0 is referenced by a program; it gets a second chance, key 1 is the oldest unreferenced.
  std::uint32_t key = 0;
  ASSERT_NE(map->lookup(&key), nullptr);
  ASSERT_EQ(put(*map, 10, 10), 0);
  std::uint64_t value = 0;
  EXPECT_EQ(get(*map, 10, value), 0);
  EXPECT_EQ(get(*map, 0, value), 0);
  EXPECT_EQ(get(*map, 1, value), -ENOENT);
  EXPECT_EQ(all_keys(*map).size(), 4u);
  // Filling further never grows the map past max_entries and always keeps the newest key.
  for (std::uint32_t k = 100; k < 200; ++k) {
    ASSERT_EQ(put(*map, k, k), 0);
    ASSERT_EQ(get(*map, k, value), 0);
    ASSERT_EQ(value, k);
    ASSERT_LE(all_keys(*map).size(), 4u);
  }
  EXPECT_EQ(put(*map, 500, 1, BPF_EXIST), -ENOENT);
  EXPECT_EQ(put(*map, 199, 1, BPF_NOEXIST), -EEXIST);
  EXPECT_EQ(del(*map, 199), 0);
  EXPECT_EQ(del(*map, 199), -ENOENT);
}

TEST(LruHashMap, UpdatingAKeyOfAFullMapMayEvictAnother) {
  // htab_lru_map_update_elem takes a free element for every update.
  auto map = create_ok(make_spec(BPF_MAP_TYPE_LRU_HASH, 4, 8, 2));
  ASSERT_NE(map, nullptr);
  ASSERT_EQ(put(*map, 1, 1), 0);
  ASSERT_EQ(put(*map, 2, 2), 0);
  ASSERT_EQ(put(*map, 2, 3, BPF_EXIST), 0);
  std::uint64_t value = 0;
  EXPECT_EQ(get(*map, 2, value), 0);
  EXPECT_EQ(value, 3u);
  EXPECT_EQ(all_keys(*map).size(), 1u);  // key 1 was evicted to make room
}

}  // namespace
}  // namespace userperf::bpf
