#include "support/proc_lines.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace userperf::support {
namespace {

struct Line {
  std::string text;
  bool cut;
  bool operator==(const Line&) const = default;
};

class ProcLines : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/proc_lines_XXXXXX";
    const int fd = mkstemp(name);
    ASSERT_GE(fd, 0);
    close(fd);
    path_ = name;
  }
  void TearDown() override { unlink(path_.c_str()); }

  std::vector<Line> read_lines(const std::string& content, std::size_t stop_after = SIZE_MAX) {
    FILE* f = std::fopen(path_.c_str(), "w");
    std::fwrite(content.data(), 1, content.size(), f);
    std::fclose(f);
    std::vector<Line> lines;
    EXPECT_TRUE(for_each_proc_line(path_.c_str(), [&](char* begin, char* end, bool cut) {
      EXPECT_EQ(*end, '\0');
      lines.push_back({std::string(begin, end), cut});
      return lines.size() >= stop_after;
    }));
    return lines;
  }

  std::string path_;
};

TEST_F(ProcLines, EachLineOnceWithAndWithoutAFinalNewline) {
  EXPECT_EQ(read_lines("a b\n\nccc\n"),
            (std::vector<Line>{{"a b", false}, {"", false}, {"ccc", false}}));
  EXPECT_EQ(read_lines("a\nlast"), (std::vector<Line>{{"a", false}, {"last", false}}));
  EXPECT_TRUE(read_lines("").empty());
}

// Lines that straddle the window's refills come out whole.
TEST_F(ProcLines, LinesAcrossWindowRefillsAreWhole) {
  std::string content;
  std::vector<Line> expected;
  for (int i = 0; i < 2000; ++i) {
    std::string line =
        "line " + std::to_string(i) + std::string(static_cast<std::size_t>(i % 37), 'x');
    content += line + "\n";
    expected.push_back({line, false});
  }
  ASSERT_GT(content.size(), 3 * kProcLineWindow);
  EXPECT_EQ(read_lines(content), expected);
}

// A line longer than the window: its first kProcLineWindow bytes, cut; its rest is no line.
TEST_F(ProcLines, ALongLineIsPassedOnceCutAndItsRestSkipped) {
  const std::string longest(3 * kProcLineWindow + 10, 'L');
  const std::vector<Line> lines = read_lines("first\n" + longest + "\nafter\n" + longest);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], (Line{"first", false}));
  EXPECT_EQ(lines[1], (Line{std::string(kProcLineWindow, 'L'), true}));
  EXPECT_EQ(lines[2], (Line{"after", false}));
  EXPECT_EQ(lines[3], (Line{std::string(kProcLineWindow, 'L'), true}));
  // Exactly the window's length: the full window holds no newline, so the line counts as cut (a
  // whole line is shorter than the window).
  const std::string exact(kProcLineWindow, 'E');
  EXPECT_EQ(read_lines(exact + "\nnext\n"),
            (std::vector<Line>{{std::string(kProcLineWindow, 'E'), true}, {"next", false}}));
}

TEST_F(ProcLines, ATrueReturnStopsAndAMissingFileIsFalse) {
  EXPECT_EQ(read_lines("1\n2\n3\n", 2), (std::vector<Line>{{"1", false}, {"2", false}}));
  EXPECT_FALSE(
      for_each_proc_line("/nonexistent/proc/file", [](char*, char*, bool) { return false; }));
}

// The real files the signal path reads.
TEST_F(ProcLines, ReadsProcSelfMapsToTheEnd) {
  std::size_t lines = 0;
  bool saw_stack = false;
  EXPECT_TRUE(for_each_proc_line("/proc/self/maps", [&](char* begin, char*, bool) {
    ++lines;
    saw_stack = saw_stack || std::strstr(begin, "[stack]") != nullptr;
    return false;
  }));
  EXPECT_GT(lines, 5u);
  EXPECT_TRUE(saw_stack);
}

}  // namespace
}  // namespace userperf::support
