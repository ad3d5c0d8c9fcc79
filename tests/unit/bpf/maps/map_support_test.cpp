// The building blocks: CPU discovery, the owner-recorded bucket lock, the free list and the
// guarded value storage.
#include <gtest/gtest.h>
#include <sys/sysinfo.h>

#include <fstream>
#include <set>
#include <thread>

#include "bpf/maps/bucket_lock.hpp"
#include "bpf/maps/free_list.hpp"
#include "bpf/maps/map.hpp"
#include "bpf/maps/value_storage.hpp"

namespace userperf::bpf {
namespace {

TEST(ValueStorage, IsZeroedAlignedAndEndsAtAGuardPage) {
  for (std::uint64_t size : {1, 8, 12, 4096, 4100, 65536}) {
    auto storage = ValueStorage::allocate(size);
    ASSERT_TRUE(storage) << size;
    const std::uint8_t* data = storage->data();
    ASSERT_EQ(storage->size(), size);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(data) % 8, 0u) << size;
    // The 8-byte rounded end is the guard page's start.
    const auto end = reinterpret_cast<std::uintptr_t>(data) + ((size + 7) & ~std::uint64_t{7});
    EXPECT_EQ(end % 4096, 0u) << size;
    for (std::uint64_t i = 0; i < size; ++i) ASSERT_EQ(data[i], 0) << size << " byte " << i;
  }
  EXPECT_EQ(ValueStorage::allocate(0)->data(), nullptr);
}

TEST(ValueStorageDeathTest, AnAccessPastTheEndFaults) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto storage = ValueStorage::allocate(24);
  ASSERT_TRUE(storage);
  volatile std::uint8_t* data = storage->data();
  data[23] = 1;  // the last byte is the storage's
  EXPECT_DEATH(data[24] = 1, "");
  EXPECT_DEATH((void)data[-4096], "");  // the guard page before it
}

TEST(Cpus, PossibleMatchesSysfs) {
  std::ifstream file("/sys/devices/system/cpu/possible");
  std::string text;
  if (!std::getline(file, text)) GTEST_SKIP() << "no /sys/devices/system/cpu/possible";
  // Count "a-b,c" independently of the implementation.
  std::uint32_t count = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t comma = text.find(',', pos);
    std::string range =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    std::size_t dash = range.find('-');
    if (dash == std::string::npos) {
      ++count;
    } else {
      count += std::stoul(range.substr(dash + 1)) - std::stoul(range.substr(0, dash)) + 1;
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  EXPECT_EQ(possible_cpus(), count);
  EXPECT_GE(possible_cpus(), static_cast<std::uint32_t>(get_nprocs()));
  EXPECT_LT(current_cpu(), possible_cpus());
}

TEST(BucketLock, NestedAcquisitionOnTheOwnerThreadIsBusy) {
  BucketLock lock;
  ASSERT_EQ(lock.lock(LockWait::kConsumer), 0);
  EXPECT_EQ(lock.lock(LockWait::kProgram), -EBUSY);
  EXPECT_EQ(lock.lock(LockWait::kConsumer), -EBUSY);
  EXPECT_EQ(lock.try_lock(), -EBUSY);
  int other_thread = 1;
  std::thread([&] { other_thread = lock.try_lock(); }).join();
  EXPECT_EQ(other_thread, -EBUSY);
  lock.unlock();
  EXPECT_EQ(lock.try_lock(), 0);
  lock.unlock();
}

TEST(BucketLock, ProgramSideGivesUpOnAHeldLock) {
  BucketLock lock;
  ASSERT_EQ(lock.lock(LockWait::kConsumer), 0);
  int result = 0;
  std::thread([&] { result = lock.lock(LockWait::kProgram); }).join();  // ~250 ms deadline
  EXPECT_EQ(result, -EBUSY);
  lock.unlock();
}

TEST(FreeList, PopsEveryIndexOnceThenReusesPushed) {
  std::vector<std::uint32_t> next(5, 0);
  FreeList list(next.data(), 5);
  std::set<std::uint32_t> popped;
  for (int i = 0; i < 5; ++i) popped.insert(list.pop());
  EXPECT_EQ(popped, (std::set<std::uint32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(list.pop(), FreeList::kNone);
  list.push(3);
  list.push(1);
  EXPECT_EQ(list.pop(), 1u);
  EXPECT_EQ(list.pop(), 3u);
  EXPECT_EQ(list.pop(), FreeList::kNone);
}

}  // namespace
}  // namespace userperf::bpf
