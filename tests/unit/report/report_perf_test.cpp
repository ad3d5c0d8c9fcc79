// userperf report against perf report on files the kernel's perf records: the workload
// (workload.c) is recorded with frame-pointer and dwarf call graphs, and the self shares, the
// children ordering and the call paths are checked. Skips when perf record cannot run here.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "perfdata/reader.hpp"
#include "report/hist.hpp"
#include "report/profile.hpp"
#include "report/report_printer.hpp"
#include "unit/perfdata/test_files.hpp"
#include "userperf/userperf.h"

namespace userperf::report {
namespace {

// One unit of work in milliseconds of CPU time: 5 units, so ~500 samples at 999 Hz per run.
constexpr const char* kUnit = "100";

class ReportPerfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/userperf-report-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // perf record of a workload into DIR/<name>.data; empty (and the test skipped) on failure.
  std::string record(const std::string& name, const std::string& call_graph) {
    const std::string out = dir_ + "/" + name + ".data";
    const std::string workload = std::string(USERPERF_REPORT_WORKLOAD_DIR) + "/" + name;
    const std::string command = "perf record -q -e cpu-clock -F 999 " + call_graph + " -o " + out +
                                " -- " + workload + " " + kUnit + " >" + dir_ + "/record.log 2>&1";
    if (std::system(command.c_str()) != 0) return {};
    return out;
  }

  std::string dir_;
};

// perf report's self share per symbol name (its sort key here), rows of [.] user symbols only.
std::map<std::string, double> perf_self_shares(const std::string& file) {
  std::map<std::string, double> shares;
  const std::string command =
      "perf report -i " + file + " --stdio --no-children -g none -F overhead,sym 2>/dev/null";
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return shares;
  // "    48.57%  [.] heavy": one name, nothing after it ("(inlined)" rows are left out).
  char line[1024];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    double share = 0;
    char mode = 0;
    char symbol[512];
    int end = 0;
    if (std::sscanf(line, " %lf%% [%c] %511s%n", &share, &mode, symbol, &end) == 3 && mode == '.' &&
        std::string(line + end).find_first_not_of(" \n") == std::string::npos) {
      shares[symbol] += share;
    }
  }
  pclose(pipe);
  return shares;
}

struct Shares {
  std::map<std::string, double> self, children;  // by symbol name, percent of the event
};

Shares userperf_shares(const Profile& profile) {
  Shares shares;
  const EventProfile& event = profile.events.at(0);
  for (const HistRow& row : build_hist(profile, 0, {})) {
    const std::string& symbol = profile.function_of(row.location).name;
    shares.self[symbol] += 100.0 * row.self / event.total_period;
    shares.children[symbol] += 100.0 * row.children / event.total_period;
  }
  return shares;
}

bool load(const std::string& file, Profile& profile, const ProfileOptions& options = {}) {
  auto reader = perfdata::testing::open_reader(file);
  if (!reader) return false;
  Expected<Profile> built = build_profile(*reader, options);
  EXPECT_TRUE(built) << built.error().message;
  if (!built) return false;
  profile = std::move(*built);
  return true;
}

// Every user symbol perf shows at 1% or more has userperf's self share within 2 points.
void expect_self_shares_match_perf(const std::string& file, const Shares& ours) {
  const auto theirs = perf_self_shares(file);
  ASSERT_TRUE(theirs.count("heavy")) << "perf report showed no heavy for " << file;
  for (const auto& [symbol, share] : theirs) {
    if (share < 1.0) continue;
    const auto it = ours.self.find(symbol);
    const double mine = it == ours.self.end() ? 0.0 : it->second;
    EXPECT_NEAR(mine, share, 2.0) << symbol << " in " << file;
  }
}

// The paths from each sample's user leaf up to main ("heavy<parent<main"), with their share;
// kernel frames (a sample taken in an interrupt) are left out.
std::map<std::string, double> call_paths(const std::string& file) {
  std::map<std::string, std::uint64_t> periods;
  std::uint64_t total = 0;
  ProfileOptions options;
  options.on_sample = [&](const ResolvedSample& sample) {
    total += sample.period;
    std::string path;
    for (LocationId location : sample.chain) {
      if (sample.profile.dso_of(location).kernel) continue;
      const std::string& symbol = sample.profile.function_of(location).name;
      path += (path.empty() ? "" : "<") + symbol;
      if (symbol == "main") {
        periods[path] += sample.period;
        return;
      }
    }
  };
  Profile profile;
  load(file, profile, options);
  std::map<std::string, double> shares;
  for (const auto& [path, period] : periods) shares[path] = 100.0 * period / total;
  return shares;
}

std::set<std::string> paths_above(const std::map<std::string, double>& shares, double floor) {
  std::set<std::string> out;
  for (const auto& [path, share] : shares) {
    if (share >= floor) out.insert(path);
  }
  return out;
}

const std::set<std::string> kWorkloadPaths = {"heavy<parent<main", "light<parent<main",
                                              "light<main"};

TEST_F(ReportPerfTest, FramePointerSelfSharesMatchPerfReport) {
  const std::string file = record("workload_fp", "-g");
  if (file.empty()) GTEST_SKIP() << "perf record failed here (see perf_event_paranoid)";
  Profile profile;
  ASSERT_TRUE(load(file, profile));
  ASSERT_EQ(profile.events.size(), 1u);
  EXPECT_EQ(profile.events[0].name, "cpu-clock");
  EXPECT_GT(profile.events[0].samples, 50u);
  EXPECT_EQ(profile.dwarf_samples, 0u);
  const Shares ours = userperf_shares(profile);
  expect_self_shares_match_perf(file, ours);
  // The workload's own split (3:2), loosely: other processes share the CPUs.
  EXPECT_NEAR(ours.self.at("heavy") / (ours.self.at("heavy") + ours.self.at("light")), 0.6, 0.12);
}

TEST_F(ReportPerfTest, ChildrenPutCallersAboveCallees) {
  const std::string file = record("workload_fp", "-g");
  if (file.empty()) GTEST_SKIP() << "perf record failed here";
  Profile profile;
  ASSERT_TRUE(load(file, profile));
  const Shares ours = userperf_shares(profile);
  EXPECT_GT(ours.children.at("main"), 90.0);
  EXPECT_GT(ours.children.at("main"), ours.children.at("parent"));
  EXPECT_GT(ours.children.at("parent"), ours.children.at("heavy"));
  // parent holds all of heavy and half of light.
  EXPECT_NEAR(ours.children.at("parent"), ours.self.at("heavy") + ours.self.at("light") / 2, 8.0);

  // The printed children table lists main, then parent, then heavy.
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  ReportOptions options;
  options.children = true;
  print_report(profile, options, out);
  std::fclose(out);
  const std::string report(text, size);
  std::free(text);
  EXPECT_NE(report.find("# Samples: "), std::string::npos);
  EXPECT_NE(report.find("of event 'cpu-clock'"), std::string::npos);
  const std::string& children = report;
  const auto main_at = children.find("[.] main\n");
  const auto parent_at = children.find("[.] parent\n");
  const auto heavy_at = children.find("[.] heavy\n");
  ASSERT_NE(heavy_at, std::string::npos) << report;
  EXPECT_LT(main_at, parent_at) << report;
  EXPECT_LT(parent_at, heavy_at) << report;
}

TEST_F(ReportPerfTest, DwarfUnwindingFindsTheFramePointerCallPaths) {
  const std::string fp = record("workload_fp", "-g");
  const std::string dwarf = record("workload_dwarf", "--call-graph dwarf");
  if (fp.empty() || dwarf.empty()) GTEST_SKIP() << "perf record failed here";
  EXPECT_EQ(paths_above(call_paths(fp), 3.0), kWorkloadPaths);
  EXPECT_EQ(paths_above(call_paths(dwarf), 3.0), kWorkloadPaths);

  Profile profile;
  ASSERT_TRUE(load(dwarf, profile));
  EXPECT_GT(profile.dwarf_samples, 50u);
  const Shares ours = userperf_shares(profile);
  expect_self_shares_match_perf(dwarf, ours);
  EXPECT_GT(ours.children.at("main"), 90.0);
}

TEST_F(ReportPerfTest, TruncatedRecordingIsAnErrorNotACrash) {
  const std::string file = record("workload_fp", "-g");
  if (file.empty()) GTEST_SKIP() << "perf record failed here";
  const auto size = std::filesystem::file_size(file);
  std::filesystem::resize_file(file, size * 3 / 5);
  auto reader = perfdata::Reader::open(file);
  const Expected<Profile> built =
      reader ? build_profile(**reader, {}) : Expected<Profile>(reader.error());
  ASSERT_FALSE(built) << "a truncated file read without error";
  EXPECT_FALSE(built.error().message.empty());
}

}  // namespace
}  // namespace userperf::report
