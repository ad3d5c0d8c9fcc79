// The mappings the recorder synthesizes MMAP2 records for, read from this process's own
// /proc/self/maps: anonymous code (a JIT's) as the kernel names it, anonymous data not at all.
#include "record/recorder/process_state.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace userperf::record {
namespace {

// An anonymous mapping of `pages` pages with `prot`, unmapped at the end of the test.
class AnonymousMapping {
 public:
  AnonymousMapping(int prot, std::size_t pages) : length_(pages * sysconf(_SC_PAGESIZE)) {
    address_ = mmap(nullptr, length_, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  ~AnonymousMapping() {
    if (address_ != MAP_FAILED) munmap(address_, length_);
  }
  AnonymousMapping(const AnonymousMapping&) = delete;
  AnonymousMapping& operator=(const AnonymousMapping&) = delete;
  bool ok() const { return address_ != MAP_FAILED; }
  std::uint64_t start() const { return reinterpret_cast<std::uintptr_t>(address_); }
  void* address() const { return address_; }
  std::size_t length() const { return length_; }

 private:
  std::size_t length_;
  void* address_;
};

const FileMapping* covering(const std::vector<FileMapping>& mappings, std::uint64_t address) {
  for (const FileMapping& m : mappings) {
    if (address >= m.start && address < m.start + m.length) return &m;
  }
  return nullptr;
}

TEST(ReadFileMappingsTest, AnonymousCodeIsNamedAnonAtItsAddressAndAnonymousDataIsLeftOut) {
  // Three pages, the middle one made executable: the kernel splits the area in three.
  AnonymousMapping area(PROT_READ | PROT_WRITE, 3);
  ASSERT_TRUE(area.ok());
  const std::uint64_t page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  ASSERT_EQ(mprotect(static_cast<char*>(area.address()) + page, page, PROT_READ | PROT_EXEC), 0);
  std::vector<FileMapping> mappings;
  ASSERT_TRUE(read_file_mappings(getpid(), mappings));
  const FileMapping* code = covering(mappings, area.start() + page);
  ASSERT_NE(code, nullptr);
  EXPECT_EQ(code->path, "//anon");
  EXPECT_EQ(code->start, area.start() + page);
  EXPECT_EQ(code->length, page);
  EXPECT_EQ(code->pgoff, code->start);  // the kernel's pgoff of anonymous memory: its address
  EXPECT_EQ(code->prot, static_cast<std::uint32_t>(PROT_READ | PROT_EXEC));
  EXPECT_EQ(code->inode, 0u);
  EXPECT_EQ(covering(mappings, area.start()), nullptr);
  EXPECT_EQ(covering(mappings, area.start() + 2 * page), nullptr);
}

TEST(ReadFileMappingsTest, NamedAnonymousCodeIsNamedAnonAsTheKernelNamesIt) {
  AnonymousMapping code(PROT_READ | PROT_EXEC, 1);
  ASSERT_TRUE(code.ok());
  // PR_SET_VMA_ANON_NAME (Linux 5.17, CONFIG_ANON_VMA_NAME): /proc/PID/maps says
  // "[anon:jit code]"; perf_event_mmap still says "//anon".
  if (prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, code.start(), code.length(), "jit code") != 0) {
    GTEST_SKIP() << "this kernel cannot name anonymous memory";
  }
  std::vector<FileMapping> mappings;
  ASSERT_TRUE(read_file_mappings(getpid(), mappings));
  const FileMapping* found = covering(mappings, code.start());
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->path, "//anon");
}

}  // namespace
}  // namespace userperf::record
