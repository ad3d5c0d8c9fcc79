#include <gtest/gtest.h>

#include <map>

#include "map_test_util.hpp"

namespace userperf::bpf {
namespace {

using namespace test;

// Resolves descriptors 10..19 to distinct objects and counts references.
class CountingResolver : public FdResolver {
 public:
  Expected<void*> get(int fd) override {
    if (fd < 10 || fd >= 20) return make_error(EBADF, "not an event");
    ++refs[fd];
    return static_cast<void*>(&objects[fd - 10]);
  }
  void put(void* object) override {
    --refs[static_cast<int>(static_cast<char*>(object) - objects) + 10];
  }
  char objects[10] = {};
  std::map<int, int> refs;
};

TEST(PerfEventArray, StoresResolvedObjects) {
  auto resolver = std::make_shared<CountingResolver>();
  {
    auto map = create_ok(make_spec(BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 3), resolver);
    ASSERT_NE(map, nullptr);
    std::uint32_t key = 1, fd = 12;
    EXPECT_EQ(map->object_at(1), nullptr);
    ASSERT_EQ(map->update_elem(&key, &fd, BPF_ANY), 0);
    EXPECT_EQ(map->object_at(1), &resolver->objects[2]);
    EXPECT_EQ(resolver->refs[12], 1);
    fd = 13;  // overwrite puts the old object
    ASSERT_EQ(map->update_elem(&key, &fd, BPF_ANY), 0);
    EXPECT_EQ(resolver->refs[12], 0);
    EXPECT_EQ(resolver->refs[13], 1);
    fd = 5;  // the resolver's error propagates and the slot keeps its object
    EXPECT_EQ(map->update_elem(&key, &fd, BPF_ANY), -EBADF);
    EXPECT_EQ(map->object_at(1), &resolver->objects[3]);
    fd = 14;
    EXPECT_EQ(map->update_elem(&key, &fd, BPF_NOEXIST), -EINVAL);
    EXPECT_EQ(map->update_elem(&key, &fd, BPF_EXIST), -EINVAL);
    key = 3;
    EXPECT_EQ(map->update_elem(&key, &fd, BPF_ANY), -E2BIG);
    EXPECT_EQ(map->delete_elem(&key), -E2BIG);
    EXPECT_EQ(map->object_at(3), nullptr);
    key = 1;
    std::uint32_t value = 0;
    EXPECT_EQ(map->lookup_elem(&key, &value), -524);  // ENOTSUPP
    EXPECT_EQ(map->lookup(&key), nullptr);
    EXPECT_EQ(map->update(&key, &fd, BPF_ANY), -EOPNOTSUPP);
    EXPECT_EQ(map->remove(&key), -EOPNOTSUPP);
    key = 0;
    EXPECT_EQ(map->delete_elem(&key), -ENOENT);
    fd = 15;
    ASSERT_EQ(map->update_elem(&key, &fd, BPF_ANY), 0);
    EXPECT_EQ(map->delete_elem(&key), 0);
    EXPECT_EQ(resolver->refs[15], 0);
    ASSERT_EQ(map->update_elem(&key, &fd, BPF_ANY), 0);
    std::uint32_t next = 9;
    EXPECT_EQ(map->get_next_key(nullptr, &next), 0);
    EXPECT_EQ(next, 0u);
    EXPECT_EQ(map->value_region().end, map->value_region().begin);
  }
  // The destructor put everything it held.
  for (const auto& [fd, refs] : resolver->refs) EXPECT_EQ(refs, 0) << fd;
}

}  // namespace
}  // namespace userperf::bpf
