// PerfMap: a JIT's /tmp/perf-PID.map, as text a JIT writes and as text nobody should.
#include "report/perf_map.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "report/address_space.hpp"
#include "report/symbol_resolver.hpp"

namespace userperf::report {
namespace {

std::string name_at(const PerfMap& map, std::uint64_t address) {
  PerfMap::Symbol symbol{};
  return map.find(address, symbol) ? *symbol.name : "<none>";
}

TEST(PerfMapTest, LinesNameTheirRangesAndNothingElse) {
  const PerfMap map = PerfMap::parse(
      "7f0000001000 40 JS:*hotLoop /tmp/hot.js:1:17\n"
      "7f0000002000 100 LazyCompile:~main\n"
      "18c4000 300 Builtin:DeoptimizationEntry_Eager\n");
  EXPECT_TRUE(map.loaded());
  EXPECT_EQ(map.names(), 3u);
  EXPECT_EQ(map.malformed(), 0u);
  EXPECT_EQ(name_at(map, 0x7f0000001000), "JS:*hotLoop /tmp/hot.js:1:17");  // spaces kept
  EXPECT_EQ(name_at(map, 0x7f000000103f), "JS:*hotLoop /tmp/hot.js:1:17");
  EXPECT_EQ(name_at(map, 0x7f0000001040), "<none>");  // [start, start + size)
  EXPECT_EQ(name_at(map, 0x7f0000000fff), "<none>");
  EXPECT_EQ(name_at(map, 0x7f00000020ff), "LazyCompile:~main");
  EXPECT_EQ(name_at(map, 0x18c42ff), "Builtin:DeoptimizationEntry_Eager");  // lines unsorted
  EXPECT_EQ(name_at(map, 0), "<none>");
  EXPECT_EQ(name_at(map, UINT64_MAX), "<none>");
  PerfMap::Symbol symbol{};
  ASSERT_TRUE(map.find(0x7f0000002080, symbol));
  EXPECT_EQ(symbol.start, 0x7f0000002000u);
}

TEST(PerfMapTest, EmptyTextIsAnEmptyMap) {
  const PerfMap map = PerfMap::parse("");
  EXPECT_TRUE(map.loaded());
  EXPECT_EQ(map.names(), 0u);
  EXPECT_EQ(map.malformed(), 0u);
  EXPECT_EQ(name_at(map, 0x1000), "<none>");
}

TEST(PerfMapTest, MalformedLinesAreSkippedAndCounted) {
  const PerfMap map = PerfMap::parse(
      "\n"                              // empty
      "1000 10\n"                       // no name
      "1000 10 \n"                      // empty name
      "0x2000 10 prefixed\n"            // 0x: perf reads START as 0 and the rest as garbage
      "2000  10 two spaces\n"           // an empty SIZE
      "zz 10 not hex\n"                 // START not hex
      "3000 1g0 bad size\n"             // SIZE followed by no space
      "10000000000000000 1 too long\n"  // 17 digits
      "ffffffffffffff00 101 wraps\n"    // START + SIZE past 2^64
      "4000 0 empty\n"                  // well formed, covers nothing
      "5000 10 good\r\n"                // a CRLF line
      "6000 10 last line without newline");
  EXPECT_EQ(map.malformed(), 9u);
  EXPECT_EQ(map.names(), 2u);
  EXPECT_EQ(name_at(map, 0x4000), "<none>");
  EXPECT_EQ(name_at(map, 0x5000), "good");
  EXPECT_EQ(name_at(map, 0x600f), "last line without newline");
  EXPECT_EQ(name_at(map, 0x1000), "<none>");
  EXPECT_EQ(name_at(map, 0x2000), "<none>");
  EXPECT_EQ(name_at(map, 0xffffffffffffff80), "<none>");
}

TEST(PerfMapTest, WhereEntriesOverlapTheLaterLineWins) {
  // A JIT that frees code and puts other code where it was writes the new line after the old.
  const PerfMap map = PerfMap::parse(
      "1000 100 old\n"           // [0x1000, 0x1100)
      "1080 100 newer\n"         // [0x1080, 0x1180): its head covers old's tail
      "1000 40 newest\n"         // [0x1000, 0x1040): same start as old
      "1100 10 inner\n"          // [0x1100, 0x1110): inside newer
      "0f00 800 oldest_big\n");  // [0xf00, 0x1700): later, so it covers everything
  EXPECT_EQ(map.malformed(), 0u);
  EXPECT_EQ(name_at(map, 0x1000), "oldest_big");
  const PerfMap layered = PerfMap::parse(
      "0f00 800 big\n"
      "1000 100 old\n"
      "1080 100 newer\n"
      "1000 40 newest\n"
      "1100 10 inner\n");
  EXPECT_EQ(name_at(layered, 0xf00), "big");
  EXPECT_EQ(name_at(layered, 0x1000), "newest");
  EXPECT_EQ(name_at(layered, 0x103f), "newest");
  EXPECT_EQ(name_at(layered, 0x1040), "old");
  EXPECT_EQ(name_at(layered, 0x107f), "old");
  EXPECT_EQ(name_at(layered, 0x1080), "newer");
  EXPECT_EQ(name_at(layered, 0x1100), "inner");
  EXPECT_EQ(name_at(layered, 0x110f), "inner");
  EXPECT_EQ(name_at(layered, 0x1110), "newer");  // newer again after inner
  EXPECT_EQ(name_at(layered, 0x117f), "newer");
  EXPECT_EQ(name_at(layered, 0x1180), "big");
  EXPECT_EQ(name_at(layered, 0x16ff), "big");
  EXPECT_EQ(name_at(layered, 0x1700), "<none>");
  PerfMap::Symbol symbol{};
  ASSERT_TRUE(layered.find(0x1110, symbol));
  EXPECT_EQ(symbol.start, 0x1080u);  // the line's start, not the start of the part
}

TEST(PerfMapTest, MissingFileIsAnEmptyMapNotAnError) {
  const PerfMap map = PerfMap::load("/nonexistent/perf-1.map");
  EXPECT_FALSE(map.loaded());
  EXPECT_EQ(name_at(map, 0x1000), "<none>");
}

TEST(PerfMapTest, PathsOfPerfMaps) {
  std::uint32_t pid = 0;
  EXPECT_TRUE(perf_map_pid("/tmp/perf-28938.map", pid));
  EXPECT_EQ(pid, 28938u);
  EXPECT_EQ(perf_map_path(28938), "/tmp/perf-28938.map");
  EXPECT_FALSE(perf_map_pid("/tmp/perf-.map", pid));
  EXPECT_FALSE(perf_map_pid("/tmp/perf-12x.map", pid));
  EXPECT_FALSE(perf_map_pid("/tmp/perf-12.map.old", pid));
  EXPECT_FALSE(perf_map_pid("/tmp/perf-99999999999.map", pid));
  EXPECT_FALSE(perf_map_pid("/usr/lib/libc.so.6", pid));
  EXPECT_EQ(short_name("/tmp/perf-28938.map"), "[JIT] tid 28938");  // perf's dso__set_basename
}

TEST(PerfMapTest, AnonymousCodeMapsToItsProcesssPerfMapAsPerfMapsIt) {
  ProcessTable table;
  table.on_mmap(42, {0x7f0000000000, 0x7f0000040000, 0x7f0000000000, "//anon"},
                PROT_READ | PROT_WRITE | PROT_EXEC);
  table.on_mmap(42, {0x7f0000100000, 0x7f0000140000, 0, "//anon"}, PROT_READ | PROT_WRITE);
  table.on_mmap(42, {0x7f0000200000, 0x7f0000201000, 0, "[heap]"}, PROT_READ | PROT_EXEC);
  const Mapping* code = table.space(42).find(0x7f0000001234);
  ASSERT_NE(code, nullptr);
  EXPECT_EQ(code->path, "/tmp/perf-42.map");
  // pgoff = start: the offset of an address in the mapping is the address, which the map lists.
  EXPECT_EQ(0x7f0000001234 - code->start + code->pgoff, 0x7f0000001234u);
  const Mapping* data = table.space(42).find(0x7f0000100000);
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->path, "//anon");  // data is no JIT's: perf leaves it as it is
  const Mapping* heap = table.space(42).find(0x7f0000200000);
  ASSERT_NE(heap, nullptr);
  EXPECT_EQ(heap->path, "/tmp/perf-42.map");  // executable memory of no file, as perf
}

TEST(PerfMapTest, ResolverReadsAMapOnceAndOnlyPerfMaps) {
  const std::string path = perf_map_path(static_cast<std::uint32_t>(getpid()));
  // This process writes no map; one left by an earlier process with this pid would be read.
  if (access(path.c_str(), F_OK) == 0) GTEST_SKIP() << path << " exists";
  {
    std::ofstream out(path);
    out << "1000 10 first\n";
  }
  SymbolResolver resolver;
  const PerfMap* map = resolver.perf_map(path);
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(name_at(*map, 0x1000), "first");
  {
    std::ofstream out(path, std::ios::app);
    out << "2000 10 second\n";
  }
  EXPECT_EQ(resolver.perf_map(path), map);  // read once
  EXPECT_EQ(name_at(*resolver.perf_map(path), 0x2000), "<none>");
  unlink(path.c_str());
  EXPECT_EQ(resolver.perf_map("/usr/lib/libc.so.6"), nullptr);
  EXPECT_EQ(resolver.image_of_mapping(path), nullptr);  // no ELF file
}

}  // namespace
}  // namespace userperf::report
