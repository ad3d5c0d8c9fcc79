// ARRAY_OF_MAPS and HASH_OF_MAPS: slots hold references to the maps the resolver gives for
// descriptors; a map that does not match the outer map's template (bpf_map_meta_equal) is EINVAL;
// a program's lookup gives the inner Map* itself, a consumer's lookup its id.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "bpf/maps/map_in_map.hpp"
#include "map_test_util.hpp"

namespace userperf::bpf {
namespace {

using namespace test;

// Descriptors 10.. are the maps in `maps` (fd 10 is maps[0]); puts are counted.
class CountingMapResolver : public FdResolver {
 public:
  Expected<void*> get(int fd) override {
    if (fd < 10 || fd - 10 >= static_cast<int>(maps.size())) {
      return make_error(EBADF, "not a descriptor");
    }
    ++refs[fd];
    return static_cast<void*>(maps[static_cast<std::size_t>(fd - 10)].get());
  }
  void put(void* map) override {
    for (std::size_t i = 0; i < maps.size(); ++i) {
      if (maps[i].get() == map) --refs[static_cast<int>(i) + 10];
    }
  }
  int add(const MapSpec& spec) {
    auto map = Map::create(spec);
    EXPECT_TRUE(map.ok()) << (map.ok() ? "" : map.error().message);
    maps.push_back(std::move(*map));
    return static_cast<int>(maps.size()) + 9;
  }
  Map* at(int fd) { return maps[static_cast<std::size_t>(fd - 10)].get(); }
  std::vector<std::unique_ptr<Map>> maps;
  std::map<int, int> refs;
};

MapSpec outer_spec(std::uint32_t type, std::uint32_t key_size, std::uint32_t entries,
                   const MapSpec& inner) {
  MapSpec spec = make_spec(type, key_size, 4, entries);
  spec.inner_map.push_back(inner);
  return spec;
}

std::unique_ptr<Map> make_outer(const MapSpec& spec, std::shared_ptr<FdResolver> maps) {
  auto map = Map::create(spec, nullptr, nullptr, std::move(maps));
  EXPECT_TRUE(map.ok()) << (map.ok() ? "" : map.error().message);
  return map.ok() ? std::move(*map) : nullptr;
}

TEST(MapInMap, CreationWantsATemplateAndADescriptorValue) {
  auto maps = std::make_shared<CountingMapResolver>();
  const MapSpec inner = make_spec(BPF_MAP_TYPE_ARRAY, 4, 8, 16);
  MapSpec no_template = make_spec(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 4);
  EXPECT_EQ(Map::create(no_template, nullptr, nullptr, maps).error().code, EBADF);
  MapSpec wide = outer_spec(BPF_MAP_TYPE_HASH_OF_MAPS, 8, 4, inner);
  wide.value_size = 8;
  EXPECT_EQ(Map::create(wide, nullptr, nullptr, maps).error().code, EINVAL);
  MapSpec nested = outer_spec(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4,
                              outer_spec(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, inner));
  EXPECT_EQ(Map::create(nested, nullptr, nullptr, maps).error().code, EINVAL);
  MapSpec bad_inner =
      outer_spec(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, make_spec(BPF_MAP_TYPE_ARRAY, 4, 0, 1));
  EXPECT_EQ(Map::create(bad_inner, nullptr, nullptr, maps).error().code, EINVAL);
  EXPECT_EQ(Map::create(outer_spec(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, inner)).error().code, EINVAL)
      << "no map resolver";
}

TEST(MapInMap, TemplateRuleIsTheKernelsMetaEqual) {
  const MapSpec array = make_spec(BPF_MAP_TYPE_ARRAY, 4, 8, 16);
  EXPECT_TRUE(inner_map_matches(array, array));
  EXPECT_FALSE(inner_map_matches(array, make_spec(BPF_MAP_TYPE_ARRAY, 4, 8, 17)));
  EXPECT_FALSE(inner_map_matches(array, make_spec(BPF_MAP_TYPE_ARRAY, 4, 16, 16)));
  EXPECT_FALSE(inner_map_matches(array, make_spec(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 16)));
  MapSpec mmapable = array;
  mmapable.map_flags = BPF_F_MMAPABLE;
  EXPECT_FALSE(inner_map_matches(array, mmapable)) << "flags differ";
  MapSpec inner_flag = make_spec(BPF_MAP_TYPE_ARRAY, 4, 8, 10);
  inner_flag.map_flags = BPF_F_INNER_MAP;
  MapSpec bigger = inner_flag;
  bigger.max_entries = 5000;
  EXPECT_TRUE(inner_map_matches(inner_flag, bigger)) << "BPF_F_INNER_MAP: any max_entries";
  const MapSpec hash = make_spec(BPF_MAP_TYPE_HASH, 8, 8, 16);
  EXPECT_TRUE(inner_map_matches(hash, make_spec(BPF_MAP_TYPE_HASH, 8, 8, 1024)))
      << "htab's map_meta_equal ignores max_entries";
  EXPECT_FALSE(inner_map_matches(hash, make_spec(BPF_MAP_TYPE_HASH, 4, 8, 16)));
}

TEST(MapInMap, ArrayOfMapsStoresMatchingMapsAndLookupGivesTheMap) {
  auto maps = std::make_shared<CountingMapResolver>();
  const MapSpec inner = make_spec(BPF_MAP_TYPE_ARRAY, 4, 8, 16);
  const int first = maps->add(inner);
  const int second = maps->add(inner);
  const int too_big = maps->add(make_spec(BPF_MAP_TYPE_ARRAY, 4, 8, 32));
  const int hash = maps->add(make_spec(BPF_MAP_TYPE_HASH, 4, 8, 16));
  {
    auto outer = make_outer(outer_spec(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, inner), maps);
    ASSERT_NE(outer, nullptr);
    std::uint32_t key = 1, fd = static_cast<std::uint32_t>(first), id = 0;
    EXPECT_EQ(outer->lookup(&key), nullptr);
    EXPECT_EQ(outer->lookup_elem(&key, &id), -ENOENT);
    ASSERT_EQ(outer->update_elem(&key, &fd, BPF_ANY), 0);
    EXPECT_EQ(outer->lookup(&key), maps->at(first));
    EXPECT_EQ(outer->lookup_elem(&key, &id), 0);
    EXPECT_EQ(id, maps->at(first)->id());
    EXPECT_EQ(maps->refs[first], 1);
    for (int wrong : {too_big, hash}) {
      fd = static_cast<std::uint32_t>(wrong);
      EXPECT_EQ(outer->update_elem(&key, &fd, BPF_ANY), -EINVAL);
      EXPECT_EQ(maps->refs[wrong], 0) << "a refused map is put back";
    }
    EXPECT_EQ(outer->lookup(&key), maps->at(first)) << "a refusal leaves the slot";
    fd = 99;
    EXPECT_EQ(outer->update_elem(&key, &fd, BPF_ANY), -EBADF);
    fd = static_cast<std::uint32_t>(second);
    ASSERT_EQ(outer->update_elem(&key, &fd, BPF_ANY), 0);
    EXPECT_EQ(maps->refs[first], 0) << "the replaced map is put";
    EXPECT_EQ(outer->lookup(&key), maps->at(second));
    key = 4;
    EXPECT_EQ(outer->update_elem(&key, &fd, BPF_ANY), -E2BIG);
    EXPECT_EQ(outer->lookup(&key), nullptr) << "past the end";
    key = 1;
    EXPECT_EQ(outer->update(&key, &fd, BPF_ANY), -EOPNOTSUPP) << "programs cannot update";
    ASSERT_EQ(outer->delete_elem(&key), 0);
    EXPECT_EQ(maps->refs[second], 0);
    EXPECT_EQ(outer->lookup(&key), nullptr);
    EXPECT_EQ(outer->delete_elem(&key), -ENOENT);
    ASSERT_EQ(outer->update_elem(&key, &fd, BPF_ANY), 0);
  }
  EXPECT_EQ(maps->refs[second], 0) << "the outer map puts its slots when it goes";
}

TEST(MapInMap, HashOfMapsStoresMatchingMapsByKey) {
  auto maps = std::make_shared<CountingMapResolver>();
  MapSpec inner = make_spec(BPF_MAP_TYPE_ARRAY, 4, 8, 10);
  inner.map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE;  // lightswitch's unwind tables
  MapSpec small = inner;
  small.max_entries = 3;
  MapSpec large = inner;
  large.max_entries = 5000;
  const int a = maps->add(small);
  const int b = maps->add(large);
  const int plain = maps->add(make_spec(BPF_MAP_TYPE_ARRAY, 4, 8, 10));
  {
    auto outer = make_outer(outer_spec(BPF_MAP_TYPE_HASH_OF_MAPS, 8, 2, inner), maps);
    ASSERT_NE(outer, nullptr);
    std::uint64_t k1 = 0x1234, k2 = 0x5678, k3 = 0x9abc;
    std::uint32_t fd = static_cast<std::uint32_t>(a), id = 0;
    EXPECT_EQ(outer->lookup(&k1), nullptr);
    ASSERT_EQ(outer->update_elem(&k1, &fd, BPF_NOEXIST), 0);
    EXPECT_EQ(outer->update_elem(&k1, &fd, BPF_NOEXIST), -EEXIST);
    EXPECT_EQ(maps->refs[a], 1) << "a failed update puts its reference";
    fd = static_cast<std::uint32_t>(b);
    ASSERT_EQ(outer->update_elem(&k2, &fd, BPF_ANY), 0);
    EXPECT_EQ(outer->lookup(&k1), maps->at(a));
    EXPECT_EQ(outer->lookup(&k2), maps->at(b));
    EXPECT_EQ(outer->lookup_elem(&k2, &id), 0);
    EXPECT_EQ(id, maps->at(b)->id());
    EXPECT_EQ(outer->update_elem(&k3, &fd, BPF_ANY), -E2BIG) << "max_entries 2";
    fd = static_cast<std::uint32_t>(plain);
    EXPECT_EQ(outer->update_elem(&k1, &fd, BPF_ANY), -EINVAL) << "flags differ from the template";
    EXPECT_EQ(maps->refs[plain], 0);
    fd = static_cast<std::uint32_t>(b);
    ASSERT_EQ(outer->update_elem(&k1, &fd, BPF_EXIST), 0);
    EXPECT_EQ(maps->refs[a], 0) << "the replaced map is put";
    EXPECT_EQ(maps->refs[b], 2);
    std::uint64_t next = 0;
    EXPECT_EQ(outer->get_next_key(nullptr, &next), 0);
    ASSERT_EQ(outer->delete_elem(&k1), 0);
    EXPECT_EQ(outer->lookup(&k1), nullptr);
    EXPECT_EQ(outer->delete_elem(&k1), -ENOENT);
    EXPECT_EQ(maps->refs[b], 1);
    EXPECT_EQ(outer->remove(&k2), -EOPNOTSUPP) << "programs cannot delete";
  }
  EXPECT_EQ(maps->refs[b], 0) << "the outer map puts its slots when it goes";
}

TEST(MapInMap, InnerMapFoundByLookupIsUsableThroughTheHelpersMapArgument) {
  auto maps = std::make_shared<CountingMapResolver>();
  const MapSpec inner = make_spec(BPF_MAP_TYPE_HASH, 4, 8, 8);
  const int fd = maps->add(inner);
  auto outer = make_outer(outer_spec(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 2, inner), maps);
  ASSERT_NE(outer, nullptr);
  std::uint32_t key = 0, value_fd = static_cast<std::uint32_t>(fd);
  ASSERT_EQ(outer->update_elem(&key, &value_fd, BPF_ANY), 0);
  auto* found = static_cast<Map*>(outer->lookup(&key));
  ASSERT_EQ(found, maps->at(fd));
  const std::uint32_t inner_key = 7;
  const std::uint64_t value = 42;
  ASSERT_EQ(found->update(&inner_key, &value, BPF_ANY), 0);
  std::uint64_t read = 0;
  ASSERT_EQ(maps->at(fd)->lookup_elem(&inner_key, &read), 0);
  EXPECT_EQ(read, 42u);
}

}  // namespace
}  // namespace userperf::bpf
