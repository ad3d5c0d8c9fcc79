// The flame graph page's data (report/flamegraph_writer): the tree's columns in pre-order, frame
// kinds, the period unit, names escaped for a <script> element, events, the differential page's
// base columns, and the size of a 1,000,000-sample, 100,000-stack page. The page's drawing is
// checked in a browser by tests/integration/flamegraph_browser_test.js.
#include "report/flamegraph_writer.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/synthetic_profile.hpp"

namespace userperf::report {
namespace {

// The raw text of a field of the JSON: a string's contents, a number, or up to the first ']'.
std::string field(const std::string& json, const std::string& name, std::size_t from = 0) {
  const std::string key = "\"" + name + "\":";
  const std::size_t at = json.find(key, from);
  if (at == std::string::npos) return "<missing " + name + ">";
  std::size_t begin = at + key.size();
  if (json[begin] == '"') return json.substr(begin + 1, json.find('"', begin + 1) - begin - 1);
  const std::size_t end =
      json[begin] == '[' ? json.find(']', begin) + 1 : json.find_first_of(",}", begin);
  return json.substr(begin, end - begin);
}

// The page's decoder of a column (flamegraph_page.js's decodeColumn), written again.
std::vector<std::uint64_t> decode(const std::string& column) {
  static const std::string digits =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_";
  std::vector<std::uint64_t> values;
  std::uint64_t value = 0;
  for (char c : column) {
    const std::size_t d = digits.find(c);
    EXPECT_NE(d, std::string::npos) << "'" << c << "' in " << column;
    value = value * 32 + (d >= 32 ? d - 32 : d);
    if (d < 32) {
      values.push_back(value);
      value = 0;
    }
  }
  return values;
}

// A mostly-zero column: (zeros skipped, value) pairs, expanded to `count` values.
std::vector<std::uint64_t> decode_sparse(const std::string& column, std::size_t count) {
  const std::vector<std::uint64_t> pairs = decode(column);
  std::vector<std::uint64_t> values(count);
  std::size_t at = 0;
  EXPECT_EQ(pairs.size() % 2, 0u);
  for (std::size_t k = 0; k + 1 < pairs.size(); k += 2) {
    at += pairs[k];
    EXPECT_LT(at, count);
    EXPECT_NE(pairs[k + 1], 0u);
    if (at < count) values[at++] = pairs[k + 1];
  }
  return values;
}

using Values = std::vector<std::uint64_t>;

// prog: main -> a (2 samples), main -> a -> k [kernel] (1), main -> b (1); periods of 1000s.
struct Builder {
  Profile profile;
  Builder() {
    profile.dsos = {{"/usr/bin/prog", "prog", "", false},
                    {"[kernel.kallsyms]", "[kernel.kallsyms]", "", true}};
    profile.threads = {{7, 7, "prog"}};
    profile.events.push_back({"cpu-clock", {}, 0, 0});
    profile.events[0].attr.type = PERF_TYPE_SOFTWARE;
    profile.events[0].attr.config = PERF_COUNT_SW_CPU_CLOCK;
  }
  LocationId function(const std::string& name, DsoId dso = 0) {
    profile.functions.push_back({name, dso, "", 0});
    profile.locations.push_back({dso, 0x1000 + profile.locations.size(),
                                 static_cast<FunctionId>(profile.functions.size() - 1), 0});
    return static_cast<LocationId>(profile.locations.size() - 1);
  }
  // `frames` outermost first.
  void stack(std::vector<LocationId> frames, std::uint64_t samples, std::uint64_t period,
             int event = 0) {
    Stack stack;
    stack.event = event;
    stack.first = static_cast<std::uint32_t>(profile.frames.size());
    stack.depth = static_cast<std::uint32_t>(frames.size());
    profile.frames.insert(profile.frames.end(), frames.rbegin(), frames.rend());
    stack.samples = samples;
    stack.period = period;
    profile.stacks.push_back(stack);
    profile.events[event].samples += samples;
    profile.events[event].total_period += period;
  }
};

TEST(FlamegraphWriter, TreeColumnsInPreOrder) {
  Builder b;
  const LocationId main = b.function("main"), a = b.function("a"), bee = b.function("b"),
                   k = b.function("k", 1);
  b.stack({main, a}, 2, 2000);
  b.stack({main, a, k}, 1, 3000);
  b.stack({main, bee}, 1, 1000);
  const std::string json = flamegraph_json(b.profile, {});

  EXPECT_EQ(field(json, "strings"), R"(["all","prog","main","a","b","k"])");
  EXPECT_EQ(field(json, "kind"), "[4,3,0,0,0,1]");  // root, command, user x3, kernel
  EXPECT_EQ(field(json, "dso"), "[-1,-1,0,0,0,1]");
  EXPECT_NE(json.find(R"("dsos":["prog","[kernel.kallsyms]"])"), std::string::npos);
  EXPECT_EQ(field(json, "name", json.find("\"events\"")), "cpu-clock");
  EXPECT_EQ(field(json, "time"), "true");
  EXPECT_EQ(field(json, "samples"), "4");
  EXPECT_EQ(field(json, "period"), "6000");
  EXPECT_EQ(field(json, "nodes"), "6");
  // all, prog, main, a (5000), k under a, then b (1000): from k (depth 4) two levels up to main
  // and one down.
  EXPECT_EQ(decode(field(json, "frame")), (Values{0, 1, 2, 3, 5, 4}));
  EXPECT_EQ(decode_sparse(field(json, "ascend"), 6), (Values{0, 0, 0, 0, 0, 2}));
  EXPECT_EQ(field(json, "ascend"), "52");  // five zeros, then 2
  EXPECT_EQ(decode_sparse(field(json, "selfSamples"), 6), (Values{0, 0, 0, 2, 1, 1}));
  EXPECT_EQ(field(json, "periodUnit"), "1000");
  EXPECT_EQ(decode_sparse(field(json, "selfPeriod"), 6), (Values{0, 0, 0, 2, 3, 1}));
  EXPECT_EQ(field(json, "diff"), "false");
}

TEST(FlamegraphWriter, LargeNumbersRoundTrip) {
  Builder b;
  const LocationId main = b.function("main"), a = b.function("a");
  const std::uint64_t big = (std::uint64_t{1} << 45) + 12345;
  b.stack({main}, 31, 1);
  b.stack({main, a}, 1024, big);
  const std::string json = flamegraph_json(b.profile, {});
  EXPECT_EQ(decode_sparse(field(json, "selfSamples"), 4), (Values{0, 0, 31, 1024}));
  EXPECT_EQ(field(json, "periodUnit"), "1");
  EXPECT_EQ(decode_sparse(field(json, "selfPeriod"), 4), (Values{0, 0, 1, big}));
}

TEST(FlamegraphWriter, NamesEscapedForAScriptElement) {
  Builder b;
  const LocationId main = b.function("say \"hi\" \\ now");
  const LocationId script = b.function("</script><script>alert(1)</script><!--");
  const LocationId unicode = b.function("ünïcode ☃ 日本::𝔣");
  const LocationId controls = b.function(std::string("line\nbreak\ttab\x01") + "\xe2\x80\xa8");
  b.stack({main, script, unicode, controls}, 1, 1);
  b.profile.threads[0].command = "a&b>c";
  std::string page;
  {
    char* buffer = nullptr;
    std::size_t size = 0;
    std::FILE* out = open_memstream(&buffer, &size);
    ASSERT_TRUE(write_flamegraph(b.profile, {}, out));
    std::fclose(out);
    page.assign(buffer, size);
    std::free(buffer);
  }
  // Only the template's own two script elements end.
  std::size_t ends = 0;
  for (std::size_t at = page.find("</script"); at != std::string::npos;
       at = page.find("</script", at + 1)) {
    ++ends;
  }
  EXPECT_EQ(ends, 2u);
  EXPECT_EQ(page.find("<!--"), std::string::npos);
  EXPECT_NE(page.find(R"("say \"hi\" \\ now")"), std::string::npos);
  EXPECT_NE(
      page.find(R"("\u003c/script\u003e\u003cscript\u003ealert(1)\u003c/script\u003e\u003c!--")"),
      std::string::npos);
  EXPECT_NE(page.find("\"ünïcode ☃ 日本::𝔣\""), std::string::npos);
  EXPECT_NE(page.find(R"("line\u000abreak\u0009tab\u0001\u2028")"), std::string::npos);
  EXPECT_NE(page.find(R"("a\u0026b\u003ec")"), std::string::npos);
  // The template's markers are all replaced.
  EXPECT_EQ(page.find("/*@"), std::string::npos);
  EXPECT_NE(page.find("<script type=\"application/json\" id=\"flamegraph-data\">{\"title\""),
            std::string::npos);
}

TEST(FlamegraphWriter, OneTreePerEventWithSamples) {
  Builder b;
  b.profile.events.push_back({"page-faults", {}, 0, 0});
  b.profile.events.push_back({"instructions", {}, 0, 0});
  const LocationId main = b.function("main");
  b.stack({main}, 3, 3000);
  b.stack({main}, 5, 5, 2);
  const std::string json = flamegraph_json(b.profile, {});
  const std::size_t events = json.find("\"events\"");
  EXPECT_EQ(field(json, "name", events), "cpu-clock");
  const std::size_t second = json.find("\"name\"", json.find("\"name\"", events) + 1);
  EXPECT_EQ(field(json, "name", second), "instructions");
  EXPECT_EQ(field(json, "time", second), "false");
  EXPECT_EQ(json.find("page-faults"), std::string::npos);
}

TEST(FlamegraphWriter, DiffCarriesBaseColumnsByPath) {
  Builder before, after;
  {
    const LocationId main = before.function("main"), a = before.function("a"),
                     d = before.function("d");
    before.stack({main, a}, 3, 3);
    before.stack({main, d}, 1, 1);
  }
  {
    // Other function ids for the same names: frames match by name and shared object.
    const LocationId c = after.function("c"), main = after.function("main"),
                     bee = after.function("b"), a = after.function("a");
    after.stack({main, a}, 1, 1);
    after.stack({main, bee}, 3, 3);
    after.stack({main, c}, 1, 1);
  }
  const std::string json = diff_flamegraph_json(before.profile, after.profile, {});
  EXPECT_EQ(field(json, "diff"), "true");
  EXPECT_EQ(field(json, "baseSamples"), "4");
  EXPECT_EQ(field(json, "basePeriod"), "4");
  // all, prog, main, then by the new total: b (3), a (1, base 3), c (1, base 0), d (only before).
  EXPECT_EQ(field(json, "strings"), R"(["all","prog","main","b","a","c","d"])");
  EXPECT_EQ(decode(field(json, "frame")), (Values{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(decode_sparse(field(json, "selfSamples"), 7), (Values{0, 0, 0, 3, 1, 1, 0}));
  EXPECT_EQ(decode_sparse(field(json, "baseSelfSamples"), 7), (Values{0, 0, 0, 0, 3, 0, 1}));
  EXPECT_EQ(decode_sparse(field(json, "baseSelfPeriod"), 7), (Values{0, 0, 0, 0, 3, 0, 1}));
}

// Issue 14's bound: a 1,000,000-sample file of 100,000 distinct stacks gives at most 10 MB.
TEST(FlamegraphWriter, MillionSamplePageUnderTenMegabytes) {
  const Profile profile = testing::synthetic_profile(1000000, 100000);
  ASSERT_EQ(profile.stacks.size(), 100000u);
  ASSERT_EQ(profile.events[0].samples, 1000000u);
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  ASSERT_TRUE(write_flamegraph(profile, {}, out));
  std::fclose(out);
  std::free(buffer);
  RecordProperty("page_bytes", std::to_string(size));
  EXPECT_LE(size, 10u * 1000 * 1000);
}

}  // namespace
}  // namespace userperf::report
