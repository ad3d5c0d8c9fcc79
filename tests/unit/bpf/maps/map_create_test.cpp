// map_create validation: each case is the kernel's verdict (checked against Linux 6.18 with the
// raw bpf() syscall; tests/conformance/bpf_map_diff_test.cpp re-checks them when it may).
#include <gtest/gtest.h>

#include <cstring>

#include "bpf/maps/map_create_check.hpp"
#include "map_test_util.hpp"

namespace userperf::bpf {
namespace {

using test::create_errno;
using test::make_spec;

struct CreateCase {
  const char* what;
  std::uint32_t type, key_size, value_size, max_entries, flags;
  int expected;  // errno, 0 for success
};

class MapCreateTest : public ::testing::TestWithParam<CreateCase> {};

TEST_P(MapCreateTest, MatchesKernel) {
  const CreateCase& c = GetParam();
  EXPECT_EQ(create_errno(make_spec(c.type, c.key_size, c.value_size, c.max_entries, c.flags)),
            c.expected)
      << c.what;
}

constexpr std::uint32_t kArray = BPF_MAP_TYPE_ARRAY;
constexpr std::uint32_t kPercpuArray = BPF_MAP_TYPE_PERCPU_ARRAY;
constexpr std::uint32_t kHash = BPF_MAP_TYPE_HASH;
constexpr std::uint32_t kPercpuHash = BPF_MAP_TYPE_PERCPU_HASH;
constexpr std::uint32_t kLru = BPF_MAP_TYPE_LRU_HASH;
constexpr std::uint32_t kPerf = BPF_MAP_TYPE_PERF_EVENT_ARRAY;
constexpr std::uint32_t kStack = BPF_MAP_TYPE_STACK_TRACE;
constexpr std::uint32_t kProgArray = BPF_MAP_TYPE_PROG_ARRAY;
constexpr std::uint32_t kCgroupArray = BPF_MAP_TYPE_CGROUP_ARRAY;

const CreateCase kCases[] = {
    {"array ok", kArray, 4, 4, 1, 0, 0},
    {"array max_entries 0", kArray, 4, 4, 0, 0, EINVAL},
    {"array key 8", kArray, 8, 4, 1, 0, EINVAL},
    {"array value 0", kArray, 4, 0, 1, 0, EINVAL},
    {"array value > INT_MAX", kArray, 4, 1u << 31, 1, 0, E2BIG},
    {"array NO_PREALLOC", kArray, 4, 4, 1, BPF_F_NO_PREALLOC, EINVAL},
    {"array unknown flag", kArray, 4, 4, 1, 1u << 31, EINVAL},
    {"array RDONLY_PROG|WRONLY_PROG", kArray, 4, 4, 1, BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG,
     EINVAL},
    {"array RDONLY|WRONLY", kArray, 4, 4, 1, BPF_F_RDONLY | BPF_F_WRONLY, EINVAL},
    {"array MMAPABLE", kArray, 4, 4, 1, BPF_F_MMAPABLE, 0},
    {"array INNER_MAP", kArray, 4, 4, 1, BPF_F_INNER_MAP, 0},
    {"array NUMA_NODE", kArray, 4, 4, 1, BPF_F_NUMA_NODE, 0},
    {"array PRESERVE_ELEMS", kArray, 4, 4, 1, BPF_F_PRESERVE_ELEMS, EINVAL},
    {"array RDONLY_PROG", kArray, 4, 4, 1, BPF_F_RDONLY_PROG, 0},
    {"percpu array 32 KiB", kPercpuArray, 4, 32768, 1, 0, 0},
    {"percpu array 32 KiB + 1", kPercpuArray, 4, 32769, 1, 0, E2BIG},
    {"percpu array NUMA_NODE", kPercpuArray, 4, 4, 1, BPF_F_NUMA_NODE, EINVAL},
    {"percpu array MMAPABLE", kPercpuArray, 4, 4, 1, BPF_F_MMAPABLE, EINVAL},
    {"hash ok", kHash, 4, 4, 1, 0, 0},
    {"hash key 0", kHash, 0, 4, 1, 0, EINVAL},
    {"hash value 0", kHash, 4, 0, 1, 0, EINVAL},
    {"hash max_entries 0", kHash, 4, 4, 0, 0, EINVAL},
    {"hash key 513", kHash, 513, 4, 1, 0, 0},
    {"hash key+value just fits", kHash, 4, (1u << 22) - 56, 1, 0, 0},
    {"hash key+value too large", kHash, 4, (1u << 22) - 52, 1, 0, E2BIG},
    {"hash max_entries 2^31 + 1", kHash, 4, 4, (1u << 31) + 1, 0, E2BIG},
    {"hash NO_PREALLOC", kHash, 4, 4, 1, BPF_F_NO_PREALLOC, 0},
    {"hash NO_COMMON_LRU", kHash, 4, 4, 1, BPF_F_NO_COMMON_LRU, EINVAL},
    {"hash ZERO_SEED", kHash, 4, 4, 1, BPF_F_ZERO_SEED, 0},
    {"hash MMAPABLE", kHash, 4, 4, 1, BPF_F_MMAPABLE, EINVAL},
    {"percpu hash 32 KiB + 1", kPercpuHash, 4, 32769, 1, 0, E2BIG},
    {"percpu hash NUMA_NODE", kPercpuHash, 4, 4, 1, BPF_F_NUMA_NODE, EINVAL},
    {"lru NO_PREALLOC", kLru, 4, 4, 1, BPF_F_NO_PREALLOC, kEnotsupp},
    {"lru NO_COMMON_LRU", kLru, 4, 4, 3, BPF_F_NO_COMMON_LRU, 0},
    {"lru NUMA_NODE", kLru, 4, 4, 1, BPF_F_NUMA_NODE, 0},
    {"perf array value 8", kPerf, 4, 8, 2, 0, EINVAL},
    {"perf array key 8", kPerf, 8, 4, 2, 0, EINVAL},
    {"perf array PRESERVE_ELEMS", kPerf, 4, 4, 2, BPF_F_PRESERVE_ELEMS, 0},
    {"perf array MMAPABLE", kPerf, 4, 4, 2, BPF_F_MMAPABLE, EINVAL},
    {"perf array RDONLY_PROG", kPerf, 4, 4, 2, BPF_F_RDONLY_PROG, EINVAL},
    {"prog array ok", kProgArray, 4, 4, 8, 0, 0},
    {"prog array value 8", kProgArray, 4, 8, 8, 0, EINVAL},
    {"prog array key 8", kProgArray, 8, 4, 8, 0, EINVAL},
    {"prog array max_entries 0", kProgArray, 4, 4, 0, 0, EINVAL},
    {"prog array MMAPABLE", kProgArray, 4, 4, 8, BPF_F_MMAPABLE, EINVAL},
    {"prog array PRESERVE_ELEMS", kProgArray, 4, 4, 8, BPF_F_PRESERVE_ELEMS, EINVAL},
    {"prog array RDONLY_PROG", kProgArray, 4, 4, 8, BPF_F_RDONLY_PROG, EINVAL},
    {"prog array WRONLY_PROG", kProgArray, 4, 4, 8, BPF_F_WRONLY_PROG, EINVAL},
    {"prog array RDONLY", kProgArray, 4, 4, 8, BPF_F_RDONLY, 0},
    {"prog array INNER_MAP", kProgArray, 4, 4, 8, BPF_F_INNER_MAP, EINVAL},
    {"cgroup array ok", kCgroupArray, 4, 4, 4, 0, 0},
    {"cgroup array value 8", kCgroupArray, 4, 8, 4, 0, EINVAL},
    {"cgroup array value 0", kCgroupArray, 4, 0, 4, 0, EINVAL},
    {"cgroup array key 8", kCgroupArray, 8, 4, 4, 0, EINVAL},
    {"cgroup array max_entries 0", kCgroupArray, 4, 4, 0, 0, EINVAL},
    {"cgroup array RDONLY_PROG", kCgroupArray, 4, 4, 4, BPF_F_RDONLY_PROG, EINVAL},
    {"cgroup array MMAPABLE", kCgroupArray, 4, 4, 4, BPF_F_MMAPABLE, EINVAL},
    {"cgroup array PRESERVE_ELEMS", kCgroupArray, 4, 4, 4, BPF_F_PRESERVE_ELEMS, EINVAL},
    {"cgroup array INNER_MAP", kCgroupArray, 4, 4, 4, BPF_F_INNER_MAP, EINVAL},
    {"cgroup array RDONLY", kCgroupArray, 4, 4, 4, BPF_F_RDONLY, 0},
    {"cgroup array NUMA_NODE", kCgroupArray, 4, 4, 4, BPF_F_NUMA_NODE, 0},
    {"stack ok", kStack, 4, 8, 1, 0, 0},
    {"stack value 12", kStack, 4, 12, 1, 0, EINVAL},
    {"stack value 0", kStack, 4, 0, 1, 0, EINVAL},
    {"stack key 8", kStack, 8, 8, 1, 0, EINVAL},
    {"stack max_entries 0", kStack, 4, 8, 0, 0, EINVAL},
    {"stack 127 ips", kStack, 4, 127 * 8, 1, 0, 0},
    {"stack 128 ips", kStack, 4, 128 * 8, 1, 0, EINVAL},
    {"stack max_entries 2^31 + 1", kStack, 4, 8, (1u << 31) + 1, 0, E2BIG},
    {"stack RDONLY_PROG", kStack, 4, 8, 1, BPF_F_RDONLY_PROG, EINVAL},
    {"stack RDONLY", kStack, 4, 8, 1, BPF_F_RDONLY, 0},
    {"stack BUILD_ID value 8", kStack, 4, 8, 1, BPF_F_STACK_BUILD_ID, EINVAL},
    {"unknown type", 9999, 4, 8, 1, 0, EINVAL},
};

INSTANTIATE_TEST_SUITE_P(Kernel, MapCreateTest, ::testing::ValuesIn(kCases));

TEST(MapCreate, ErrorsCarryAMessage) {
  auto map = Map::create(make_spec(kArray, 8, 4, 1));
  ASSERT_FALSE(map.ok());
  EXPECT_EQ(map.error().code, EINVAL);
  EXPECT_NE(map.error().message.find("key_size"), std::string::npos) << map.error().message;
}

TEST(MapCreate, UnknownFlagsAreNamedInHex) {
  auto map = Map::create(make_spec(kArray, 4, 8, 1, 0x80000000u));
  ASSERT_FALSE(map.ok());
  EXPECT_EQ(map.error().code, EINVAL);
  EXPECT_EQ(map.error().message, "map 'test_map': unknown flags 0x80000000");
}

TEST(MapCreate, PerfEventArrayMaxEntriesZeroIsPossibleCpus) {
  // libbpf's fix-up (the kernel alone rejects 0); needs a resolver.
  auto map = Map::create(make_spec(kPerf, 4, 4, 0), std::make_shared<test::NoFdResolver>());
  ASSERT_TRUE(map.ok()) << map.error().message;
  EXPECT_EQ((*map)->spec().max_entries, possible_cpus());
  EXPECT_EQ(Map::create(make_spec(kPerf, 4, 4, 2)).error().code, EINVAL);  // no resolver
}

TEST(MapCreate, NoCommonLruRoundsMaxEntriesToCpus) {
  auto map = Map::create(make_spec(kLru, 4, 4, 1, BPF_F_NO_COMMON_LRU));
  ASSERT_TRUE(map.ok());
  EXPECT_EQ((*map)->spec().max_entries % possible_cpus(), 0u);
  EXPECT_GE((*map)->spec().max_entries, 1u);
}

TEST(MapCreate, LargeSparseMapsAreLazy) {
  // 4 GiB of values: the kernel accepts it and so do we, touching no pages until used.
  auto map = Map::create(make_spec(kArray, 4, 4096, 1u << 20));
  ASSERT_TRUE(map.ok()) << map.error().message;
  std::uint32_t key = (1u << 20) - 1;
  std::vector<std::uint8_t> value(4096, 7);
  EXPECT_EQ((*map)->update_elem(&key, value.data(), BPF_ANY), 0);
}

TEST(MapCreate, GlobalData) {
  MapSpec spec = make_spec(kArray, 4, 16, 1, BPF_F_RDONLY_PROG);
  spec.global_data = true;
  spec.initial_value = {1, 2, 3, 4, 5};
  auto map = Map::create(spec);
  ASSERT_TRUE(map.ok()) << map.error().message;
  std::uint8_t value[16];
  std::uint32_t key = 0;
  ASSERT_EQ((*map)->lookup_elem(&key, value), 0);
  const std::uint8_t expected[16] = {1, 2, 3, 4, 5};
  EXPECT_EQ(std::memcmp(value, expected, 16), 0);
  MemoryRegion region = (*map)->value_region();
  EXPECT_FALSE(region.writable);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>((*map)->lookup(&key)), region.begin);
  EXPECT_GE(region.end - region.begin, 16u);
  EXPECT_EQ((*map)->update(&key, value, BPF_ANY), -EPERM);

  spec.map_flags = 0;  // .data: writable by programs
  auto data = Map::create(spec);
  ASSERT_TRUE(data.ok());
  EXPECT_TRUE((*data)->value_region().writable);

  spec.initial_value.assign(17, 0);
  EXPECT_EQ(create_errno(spec), EINVAL);
  spec.initial_value.clear();
  spec.max_entries = 2;
  EXPECT_EQ(create_errno(spec), EINVAL);
  spec.max_entries = 1;
  spec.type = kHash;
  EXPECT_EQ(create_errno(spec), EINVAL);

  MapSpec not_global = make_spec(kArray, 4, 16, 1);
  not_global.initial_value = {1};
  EXPECT_EQ(create_errno(not_global), EINVAL);
}

}  // namespace
}  // namespace userperf::bpf
