#include "bpf/maps/stack_trace_map.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <vector>

#include "map_test_util.hpp"

namespace userperf::bpf {
namespace {

using namespace test;

StackTraceMap* as_stack_map(const std::unique_ptr<Map>& map) {
  return dynamic_cast<StackTraceMap*>(map.get());
}

TEST(StackTraceMap, SameStackSameIdAndReadBack) {
  auto map = create_ok(make_spec(BPF_MAP_TYPE_STACK_TRACE, 4, 4 * 8, 16));
  ASSERT_NE(map, nullptr);
  StackTraceMap* stacks = as_stack_map(map);
  ASSERT_NE(stacks, nullptr);
  EXPECT_EQ(stacks->n_buckets(), 16u);
  const std::uint64_t ips[] = {0x1000, 0x2000, 0x3000};
  long id = stacks->get_stackid(ips, 3, 0);
  ASSERT_GE(id, 0);
  ASSERT_LT(id, 16);
  EXPECT_EQ(stacks->get_stackid(ips, 3, 0), id);
  std::uint64_t value[4] = {9, 9, 9, 9};
  auto key = static_cast<std::uint32_t>(id);
  ASSERT_EQ(map->lookup_elem(&key, value), 0);
  EXPECT_EQ(value[0], 0x1000u);
  EXPECT_EQ(value[2], 0x3000u);
  EXPECT_EQ(value[3], 0u);  // zero-filled past the stored depth
  std::uint32_t next = 99;
  ASSERT_EQ(map->get_next_key(nullptr, &next), 0);
  EXPECT_EQ(next, key);
  EXPECT_EQ(map->get_next_key(&key, &next), -ENOENT);
  EXPECT_EQ(map->update_elem(&key, value, BPF_ANY), -EINVAL);
  EXPECT_EQ(map->update(&key, value, BPF_ANY), -EINVAL);
  EXPECT_EQ(map->lookup(&key), nullptr);
  EXPECT_EQ(map->delete_elem(&key), 0);
  EXPECT_EQ(map->delete_elem(&key), -ENOENT);
  EXPECT_EQ(map->lookup_elem(&key, value), -ENOENT);
  std::uint32_t out_of_range = 16;
  EXPECT_EQ(map->delete_elem(&out_of_range), -E2BIG);
  EXPECT_EQ(map->lookup_elem(&out_of_range, value), -ENOENT);
}

TEST(StackTraceMap, Errors) {
  auto map = create_ok(make_spec(BPF_MAP_TYPE_STACK_TRACE, 4, 16, 4));
  StackTraceMap* stacks = as_stack_map(map);
  ASSERT_NE(stacks, nullptr);
  const std::uint64_t ips[] = {1, 2, 3};
  EXPECT_EQ(stacks->get_stackid(ips, 0, 0), -EFAULT);
  EXPECT_EQ(stacks->get_stackid(ips, 2, 1ull << 11), -EINVAL);  // BUILD_ID is no get_stackid flag
  EXPECT_GE(stacks->get_stackid(ips, 2, BPF_F_USER_STACK | 3), 0);  // skip bits: the caller's
}

TEST(StackTraceMap, TruncatesToValueSize) {
  auto map = create_ok(make_spec(BPF_MAP_TYPE_STACK_TRACE, 4, 16, 4));
  StackTraceMap* stacks = as_stack_map(map);
  const std::uint64_t deep[] = {1, 2, 3, 4};
  const std::uint64_t shallow[] = {1, 2};
  long id = stacks->get_stackid(deep, 4, 0);
  ASSERT_GE(id, 0);
  EXPECT_EQ(stacks->get_stackid(shallow, 2, 0), id);  // the same two ips were stored
}

// Finds two distinct stacks that land in the same bucket of a map with `buckets` buckets.
void colliding_stacks(StackTraceMap& stacks, std::uint64_t (&a)[1], std::uint64_t (&b)[1]) {
  a[0] = 1;
  long first = stacks.get_stackid(a, 1, 0);
  ASSERT_GE(first, 0);
  for (std::uint64_t ip = 2;; ++ip) {
    b[0] = ip;
    long id = stacks.get_stackid(b, 1, 0);
    if (id == -EEXIST) return;
    ASSERT_GE(id, 0);
    ASSERT_EQ(stacks.delete_elem(&id), 0);
  }
}

TEST(StackTraceMap, CollisionsExistReuseAndFastCompare) {
  auto map = create_ok(make_spec(BPF_MAP_TYPE_STACK_TRACE, 4, 8, 2));
  StackTraceMap* stacks = as_stack_map(map);
  std::uint64_t a[1], b[1];
  colliding_stacks(*stacks, a, b);
  const long id = stacks->get_stackid(a, 1, 0);
  ASSERT_GE(id, 0);
  EXPECT_EQ(stacks->get_stackid(b, 1, 0), -EEXIST);
  EXPECT_EQ(stacks->get_stackid(b, 1, BPF_F_REUSE_STACKID), id);
  std::uint64_t stored = 0;
  auto key = static_cast<std::uint32_t>(id);
  ASSERT_EQ(map->lookup_elem(&key, &stored), 0);
  EXPECT_EQ(stored, b[0]);
  EXPECT_EQ(stacks->get_stackid(a, 1, 0), -EEXIST);
}

TEST(StackTraceMap, AtMostMaxEntriesStacks) {
  // 3 entries, 4 buckets: a fourth stack has no free bucket (-ENOMEM), as the kernel's freelist.
  auto map = create_ok(make_spec(BPF_MAP_TYPE_STACK_TRACE, 4, 8, 3));
  StackTraceMap* stacks = as_stack_map(map);
  EXPECT_EQ(stacks->n_buckets(), 4u);
  std::vector<long> ids;
  bool saw_enomem = false;
  for (std::uint64_t ip = 1; ip < 200 && !saw_enomem; ++ip) {
    long id = stacks->get_stackid(&ip, 1, 0);
    if (id == -ENOMEM) saw_enomem = true;
    if (id >= 0 && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  EXPECT_TRUE(saw_enomem);
  EXPECT_EQ(ids.size(), 3u);
  std::uint32_t key = static_cast<std::uint32_t>(ids[0]);
  ASSERT_EQ(map->delete_elem(&key), 0);
  std::uint64_t stored = 0;
  std::vector<std::uint32_t> keys = all_keys(*map);
  EXPECT_EQ(keys.size(), 2u);
  for (std::uint32_t k : keys) EXPECT_EQ(map->lookup_elem(&k, &stored), 0);
}

}  // namespace
}  // namespace userperf::bpf
