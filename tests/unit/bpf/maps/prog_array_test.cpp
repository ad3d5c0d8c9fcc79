// PROG_ARRAY: slots hold references to the programs the resolver gives for descriptors; the
// consumer side has the kernel's fd-array semantics (BPF_ANY only, E2BIG past the end, ENOENT for
// an empty slot, lookup returns the program's id) and the owner check (one program type per map).
#include <gtest/gtest.h>

#include <map>

#include "bpf/maps/prog_array.hpp"
#include "map_test_util.hpp"

namespace userperf::bpf {
namespace {

using namespace test;

// Descriptors 10..19 are programs: 10..17 of type PERF_EVENT (id = 100 + fd), 18..19 KPROBE.
class CountingProgResolver : public ProgResolver {
 public:
  Expected<void*> get(int fd) override {
    if (fd < 10 || fd >= 20) return make_error(EBADF, "not a descriptor");
    ++refs[fd];
    return static_cast<void*>(&programs[fd - 10]);
  }
  void put(void* program) override { --refs[fd_of(program)]; }
  std::uint32_t prog_type(void* program) override {
    return fd_of(program) >= 18 ? BPF_PROG_TYPE_KPROBE : BPF_PROG_TYPE_PERF_EVENT;
  }
  std::uint32_t prog_id(void* program) override {
    return static_cast<std::uint32_t>(100 + fd_of(program));
  }
  int fd_of(void* program) const {
    return static_cast<int>(static_cast<char*>(program) - programs) + 10;
  }
  char programs[10] = {};
  std::map<int, int> refs;
};

std::unique_ptr<Map> make_prog_array(std::shared_ptr<CountingProgResolver> programs,
                                     std::uint32_t entries) {
  auto map =
      Map::create(make_spec(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, entries), nullptr, std::move(programs));
  EXPECT_TRUE(map.ok()) << (map.ok() ? "" : map.error().message);
  return map.ok() ? std::move(*map) : nullptr;
}

// Destroying an array puts every program still stored, the highest slot too, and walks no further
// than that slot: an array of 2^30 slots (8 GiB of address space) with two programs stored.
TEST(ProgArray, DestroyingPutsEveryStoredProgramUpToTheHighestSlot) {
  auto programs = std::make_shared<CountingProgResolver>();
  {
    auto map = make_prog_array(programs, 1u << 30);
    ASSERT_NE(map, nullptr);
    std::uint32_t key = 3, fd = 11;
    ASSERT_EQ(map->update_elem(&key, &fd, BPF_ANY), 0);
    key = 100'003;
    fd = 12;
    ASSERT_EQ(map->update_elem(&key, &fd, BPF_ANY), 0);
    key = 9;  // stored and deleted: nothing to put
    ASSERT_EQ(map->update_elem(&key, &fd, BPF_ANY), 0);
    ASSERT_EQ(map->delete_elem(&key), 0);
    EXPECT_EQ(programs->refs[11], 1);
    EXPECT_EQ(programs->refs[12], 1);
  }
  EXPECT_EQ(programs->refs[11], 0);
  EXPECT_EQ(programs->refs[12], 0);
}

TEST(ProgArray, StoresProgramReferencesWithTheKernelsErrnos) {
  auto programs = std::make_shared<CountingProgResolver>();
  {
    auto map = make_prog_array(programs, 4);
    ASSERT_NE(map, nullptr);
    std::uint32_t key = 2, fd = 11, id = 0;
    EXPECT_EQ(map->object_at(2), nullptr);
    EXPECT_EQ(map->lookup_elem(&key, &id), -ENOENT);
    ASSERT_EQ(map->update_elem(&key, &fd, BPF_ANY), 0);
    EXPECT_EQ(map->object_at(2), &programs->programs[1]);
    EXPECT_EQ(programs->refs[11], 1);
    EXPECT_EQ(map->lookup_elem(&key, &id), 0);
    EXPECT_EQ(id, 111u);
    fd = 12;  // overwriting puts the old program
    ASSERT_EQ(map->update_elem(&key, &fd, BPF_ANY), 0);
    EXPECT_EQ(programs->refs[11], 0);
    EXPECT_EQ(programs->refs[12], 1);
    EXPECT_EQ(map->update_elem(&key, &fd, BPF_NOEXIST), -EINVAL);
    EXPECT_EQ(map->update_elem(&key, &fd, BPF_EXIST), -EINVAL);
    fd = 5;
    EXPECT_EQ(map->update_elem(&key, &fd, BPF_ANY), -EBADF);
    EXPECT_EQ(map->object_at(2), &programs->programs[2]);
    key = 4;
    EXPECT_EQ(map->update_elem(&key, &fd, BPF_ANY), -E2BIG);
    EXPECT_EQ(map->delete_elem(&key), -E2BIG);
    EXPECT_EQ(map->lookup_elem(&key, &id), -ENOENT);
    EXPECT_EQ(map->object_at(4), nullptr);
    EXPECT_EQ(map->object_at(0xffffffffu), nullptr);
    key = 0;
    EXPECT_EQ(map->delete_elem(&key), -ENOENT);
    EXPECT_EQ(map->lookup(&key), nullptr);  // programs cannot read a prog array
    EXPECT_EQ(map->update(&key, &fd, BPF_ANY), -EOPNOTSUPP);
    fd = 13;
    ASSERT_EQ(map->update_elem(&key, &fd, BPF_ANY), 0);
    EXPECT_EQ(map->delete_elem(&key), 0);
    EXPECT_EQ(programs->refs[13], 0);
    std::uint32_t next = 9;
    EXPECT_EQ(map->get_next_key(nullptr, &next), 0);
    EXPECT_EQ(next, 0u);
    ASSERT_EQ(map->update_elem(&key, &fd, BPF_ANY), 0);
  }
  for (const auto& [fd, refs] : programs->refs) EXPECT_EQ(refs, 0) << fd;  // the destructor put all
}

TEST(ProgArray, TheFirstProgramsTypeOwnsTheMap) {
  auto programs = std::make_shared<CountingProgResolver>();
  auto map = make_prog_array(programs, 4);
  ASSERT_NE(map, nullptr);
  auto& array = static_cast<ProgArray&>(*map);
  EXPECT_EQ(array.owner_type(), 0u);
  std::uint32_t key = 0, fd = 10;
  ASSERT_EQ(map->update_elem(&key, &fd, BPF_ANY), 0);
  EXPECT_EQ(array.owner_type(), static_cast<std::uint32_t>(BPF_PROG_TYPE_PERF_EVENT));
  key = 1;
  fd = 18;  // a kprobe program cannot join a perf_event program's array
  EXPECT_EQ(map->update_elem(&key, &fd, BPF_ANY), -EINVAL);
  EXPECT_EQ(map->object_at(1), nullptr);
  EXPECT_EQ(programs->refs[18], 0);  // the refused reference was put back
}

TEST(ProgArray, NeedsAProgramResolver) {
  EXPECT_EQ(Map::create(make_spec(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4)).error().code, EINVAL);
}

}  // namespace
}  // namespace userperf::bpf
