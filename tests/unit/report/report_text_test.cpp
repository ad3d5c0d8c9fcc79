// The text report's pieces on a profile made by hand, so each of perf's rules shows in a few
// lines: the filter's decisions, call graphs in both orders and both children modes, the row
// order, and the diff table's matching and order. cli_report_text compares the whole text with
// perf's on recorded files.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "report/diff_printer.hpp"
#include "report/profile.hpp"
#include "report/profile_filter.hpp"
#include "report/profile_match.hpp"
#include "report/report_printer.hpp"

namespace userperf::report {
namespace {

// One thread of "work" (pid 10) in "exe": main -> parent -> heavy (60), main -> parent -> light
// (20), main -> light (20); addresses ascending main, parent, heavy, light.
Profile workload(std::uint64_t heavy = 60, std::uint64_t light_in_parent = 20,
                 std::uint64_t light_in_main = 20) {
  Profile profile;
  EventProfile event;
  event.name = "cpu-clock";
  event.attr.sample_type = PERF_SAMPLE_CALLCHAIN;
  profile.events.push_back(event);
  profile.dsos.push_back({"/usr/bin/exe", "exe", "", false});
  for (const char* name : {"main", "parent", "heavy", "light"}) {
    profile.functions.push_back({name, 0, "", 0});
    profile.locations.push_back({0, 0x100 * (profile.locations.size() + 1),
                                 static_cast<FunctionId>(profile.functions.size() - 1), 0});
  }
  profile.threads.push_back({10, 10, "work"});
  const auto stack = [&](std::uint64_t period, std::vector<LocationId> frames) {
    if (period == 0) return;
    profile.stacks.push_back({0, 0, static_cast<std::uint32_t>(profile.frames.size()),
                              static_cast<std::uint32_t>(frames.size()), period, period});
    profile.frames.insert(profile.frames.end(), frames.begin(), frames.end());
    profile.events[0].samples += period;
    profile.events[0].total_period += period;
  };
  stack(heavy, {2, 1, 0});
  stack(light_in_parent, {3, 1, 0});
  stack(light_in_main, {3, 0});
  return profile;
}

std::string text_of(const std::function<void(std::FILE*)>& print) {
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  print(out);
  std::fclose(out);
  std::string result(text, size);
  std::free(text);
  return result;
}

// The table and graphs of the first event, without the header above the column titles.
std::string table(const Profile& profile, const ReportOptions& options) {
  const std::string text = text_of([&](std::FILE* out) { print_report(profile, options, out); });
  return text.substr(text.find("# Overhead") != std::string::npos ? text.find("# Overhead")
                                                                  : text.find("# Children"));
}

TEST(ProfileFilter, ThreadFiltersLookAtTheThreadAndDsoAndSymbolFiltersAtTheLeaf) {
  const Profile profile = workload();
  const auto accepted = [&](const FilterOptions& options) {
    const ProfileFilter filter(profile, options);
    std::vector<bool> kept;
    for (const Stack& stack : profile.stacks) kept.push_back(filter.accept(stack));
    return kept;
  };
  EXPECT_EQ(accepted({}), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(accepted({.comms = {"work"}}), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(accepted({.comms = {"other"}}), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(accepted({.pids = {10}, .tids = {11}}), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(accepted({.dsos = {"/usr/bin/exe"}}), (std::vector<bool>{true, true, true}));
  // A symbol filter keeps the samples taken in it, not those of its callees.
  EXPECT_EQ(accepted({.symbols = {"light"}}), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(accepted({.symbols = {"main", "parent"}}), (std::vector<bool>{false, false, false}));
  EXPECT_FALSE(ProfileFilter(profile, {}).predicate());
  EXPECT_EQ(split_list("a,,b,"), (std::vector<std::string>{"a", "b"}));
}

TEST(ReportText, SelfEntriesWithCalleeOrderGraphs) {
  ReportOptions options;
  options.call_graph = {CallGraphMode::kGraph, 0.5, CallOrder::kCallee};
  EXPECT_EQ(table(workload(), options),
            "# Overhead  Command  Shared Object  Symbol   \n"
            "# ........  .......  .............  .........\n"
            "#\n"
            "    60.00%  work     exe            [.] heavy\n"
            "            |\n"
            "            ---heavy\n"
            "               parent\n"
            "               main\n"
            "\n"
            "    40.00%  work     exe            [.] light\n"
            "            |\n"
            "            ---light\n"
            "               |          \n"
            "               |--20.00%--parent\n"
            "               |          main\n"
            "               |          \n"
            "                --20.00%--main\n"
            "\n");
}

TEST(ReportText, ChildrenEntriesWithCallerOrderGraphs) {
  ReportOptions options;
  options.children = true;
  options.keys = {SortKey::kSym};
  options.call_graph = {CallGraphMode::kGraph, 0.5, CallOrder::kCaller};
  const std::string text = table(workload(), options);
  // main (100%) above parent (80%); heavy, a leaf, has its whole chains. With sym the first key,
  // perf leaves out the entry's own frame atop a single chain: main's graph starts at its branches.
  EXPECT_EQ(text.substr(0, text.find("    80.00%")),
            "# Children      Self  Symbol    \n"
            "# ........  ........  ..........\n"
            "#\n"
            "   100.00%     0.00%  [.] main\n"
            "            |          \n"
            "            |--80.00%--parent\n"
            "            |          |          \n"
            "            |          |--60.00%--heavy\n"
            "            |          |          \n"
            "            |           --20.00%--light\n"
            "            |          \n"
            "             --20.00%--light\n"
            "\n");
  EXPECT_NE(text.find("    60.00%    60.00%  [.] heavy\n"
                      "            |\n"
                      "            ---parent\n"
                      "               heavy\n"),
            std::string::npos)
      << text;
}

// Addresses of a mapped file that no symbol names (a stripped library, the vDSO between its
// symbols) are rows apart, as perf's sym key compares their addresses. perf names a leaf's row by
// the offset in the mapping and, with --children, the row of its place in the chain by the address
// as sampled.
TEST(ReportText, AddressesNoSymbolNamesAreRowsOfTheirOwnNamedAsPerfNamesThem) {
  Profile profile = workload(0, 0, 0);
  profile.dsos.push_back({"[vdso]", "[vdso]", "", false});
  profile.functions.push_back({"[unknown]", 1, "", 0});
  const auto unnamed = static_cast<FunctionId>(profile.functions.size() - 1);
  for (const std::uint64_t offset : {0x7dcu, 0x79du}) {
    Location l{1, offset, unnamed, 0};
    l.map_address = offset;
    l.sampled_address = 0x7f0000000000 + offset;
    profile.locations.push_back(l);
  }
  const auto stack = [&](std::uint64_t period, std::vector<LocationId> frames) {
    profile.stacks.push_back({0, 0, static_cast<std::uint32_t>(profile.frames.size()),
                              static_cast<std::uint32_t>(frames.size()), period, period});
    profile.frames.insert(profile.frames.end(), frames.begin(), frames.end());
    profile.events[0].samples += period;
    profile.events[0].total_period += period;
  };
  stack(30, {4, 0});
  stack(10, {5, 0});
  ReportOptions options;
  options.keys = {SortKey::kSym};
  EXPECT_EQ(table(profile, options),
            "# Overhead  Symbol                \n"
            "# ........  ......................\n"
            "#\n"
            "    75.00%  [.] 0x00000000000007dc\n"
            "    25.00%  [.] 0x000000000000079d\n");
  options.children = true;
  EXPECT_EQ(table(profile, options),
            "# Children      Self  Symbol                \n"
            "# ........  ........  ......................\n"
            "#\n"
            "   100.00%     0.00%  [.] main\n"
            "    75.00%    75.00%  [.] 0x00000000000007dc\n"
            "    75.00%     0.00%  [.] 0x00007f00000007dc\n"
            "    25.00%    25.00%  [.] 0x000000000000079d\n"
            "    25.00%     0.00%  [.] 0x00007f000000079d\n");
}

TEST(ReportText, FractalSharesAreOfTheParentAndTheThresholdLeavesARemainder) {
  ReportOptions options;
  options.call_graph = {CallGraphMode::kFractal, 30, CallOrder::kCallee};
  const std::string text = table(workload(70, 20, 10), options);
  // light's chains: 20 through parent (66.67% of light), 10 from main (33.33%): both over 30%.
  EXPECT_NE(text.find("|--66.67%--parent"), std::string::npos) << text;
  EXPECT_NE(text.find(" --33.33%--main"), std::string::npos) << text;
  options.call_graph.threshold = 50;
  const std::string cut = table(workload(70, 20, 10), options);
  EXPECT_EQ(cut.find("--33.33%--main"), std::string::npos) << cut;
  EXPECT_NE(cut.find("--33.33%--[...]"), std::string::npos) << cut;
}

TEST(ReportText, PercentLimitAndRelativeFilteredShares) {
  ReportOptions options;
  options.percent_limit = 50;
  const std::string limited = table(workload(), options);
  EXPECT_NE(limited.find("[.] heavy"), std::string::npos);
  EXPECT_EQ(limited.find("[.] light"), std::string::npos);
  options = {};
  options.filters.symbols = {"light"};
  EXPECT_NE(table(workload(), options).find("    40.00%  work     exe            [.] light"),
            std::string::npos);
  options.relative = true;
  const std::string relative =
      text_of([&](std::FILE* out) { print_report(workload(), options, out); });
  EXPECT_NE(relative.find("# Samples: 40  of event 'cpu-clock'\n# Event count (approx.): 40\n"),
            std::string::npos)
      << relative;
  EXPECT_NE(relative.find("   100.00%  work     exe            [.] light"), std::string::npos);
}

TEST(ReportText, SampleCountsAreRoundedAsPerfDoes) {
  EXPECT_EQ(sample_count_text(497), "497 ");
  EXPECT_EQ(sample_count_text(1000), "1000 ");
  EXPECT_EQ(sample_count_text(2684), "2K");
  EXPECT_EQ(sample_count_text(1000000), "1000K");
  EXPECT_EQ(sample_count_text(1000999), "1000K");  // 1000 is not over 1000: perf says 1000K
  EXPECT_EQ(sample_count_text(2500000), "2M");
}

TEST(ProfileMatch, FunctionsMatchByDsoAndNameAcrossProfiles) {
  Profile base = workload(60, 20, 20);
  Profile next = workload(30, 20, 50);
  next.functions[0].name = "main2";  // in NEW only; BASE's main is in BASE only
  const ProfileDiff diff = diff_profiles(base, 0, {}, next, 0, {});
  ASSERT_EQ(diff.functions.keys.size(), 5u);
  EXPECT_EQ(diff.functions.base_key[2], diff.functions.new_key[2]);  // heavy
  EXPECT_NE(diff.functions.base_key[0], diff.functions.new_key[0]);
  const MatchedPeriods& light = diff.periods[diff.functions.base_key[3]];
  EXPECT_EQ(light.base_self, 40u);
  EXPECT_EQ(light.new_self, 70u);
  EXPECT_EQ(diff.periods[diff.functions.base_key[0]].base_children, 100u);
  EXPECT_EQ(diff.periods[diff.functions.base_key[0]].new_children, 0u);

  const std::string text = text_of([&](std::FILE* out) { print_diff(base, next, {}, out); });
  EXPECT_EQ(text,
            "# Event 'cpu-clock'\n"
            "#\n"
            "# Baseline  Delta Abs  Shared Object  Symbol   \n"
            "# ........  .........  .............  .........\n"
            "#\n"
            "    60.00%    -30.00%  exe            [.] heavy\n"
            "    40.00%    +30.00%  exe            [.] light\n");
}

}  // namespace
}  // namespace userperf::report
