// perf 6.1 reads what the writer writes: the shared sample file (dynamic-type AUX leader in a
// GROUP_DESC group with an AUX-sampling sibling, PMU_MAPPINGS, AUX records with every flag,
// ITRACE_START, MMAP2 of this binary) through `perf report --header-only`, `perf report --stdio`
// and `perf script`, each exiting 0 with no "failed"/"Error"/"Invalid" on stderr, and symbolizing
// the samples' IP to sample_file_marker. Skips when perf is not installed.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "unit/perfdata/sample_file.hpp"
#include "unit/perfdata/test_files.hpp"

namespace userperf::perfdata {
namespace {

bool perf_installed() {
  return std::system("perf --version >/dev/null 2>&1") == 0;
}

void expect_clean(const testing::PerfRun& run, const std::string& what) {
  EXPECT_EQ(run.exit_code, 0) << what << "\n" << run.err;
  for (const char* word : {"failed", "Error", "Invalid"}) {
    EXPECT_EQ(run.err.find(word), std::string::npos) << what << " stderr has " << word << ":\n"
                                                     << run.err;
  }
}

class PerfCompat : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!perf_installed()) GTEST_SKIP() << "perf is not installed (scripts/install-deps.sh)";
    path_ = dir_.file("perf.data");
    ASSERT_EQ(testing::write_sample_file(path_), "");
  }
  testing::TempDir dir_;
  std::string path_;
};

TEST_F(PerfCompat, HeaderOnlyShowsFeaturesAndTheGroup) {
  const testing::PerfRun run = run_perf(dir_, "report --header-only -i '" + path_ + "'");
  expect_clean(run, "perf report --header-only");
  EXPECT_NE(run.out.find("# pmu mappings: software = 1, calltrace = 8"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("# group: {"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("# nrcpus online"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("# perf version : userperf"), std::string::npos) << run.out;
}

TEST_F(PerfCompat, ReportAcceptsTheFileAndSymbolizesWithoutGroupView) {
  expect_clean(run_perf(dir_, "report --stdio -i '" + path_ + "'"), "perf report --stdio");
  // The group view skips a group whose leader (the AUX event) has no samples of its own.
  const testing::PerfRun flat = run_perf(dir_, "report --stdio --no-group -i '" + path_ + "'");
  expect_clean(flat, "perf report --stdio --no-group");
  EXPECT_NE(flat.out.find("sample_file_marker"), std::string::npos) << flat.out;
  EXPECT_NE(flat.out.find("perfdata-test"), std::string::npos) << "COMM name: " << flat.out;
}

TEST_F(PerfCompat, ScriptPrintsEverySample) {
  const testing::PerfRun run = run_perf(dir_, "script -i '" + path_ + "'");
  expect_clean(run, "perf script");
  std::size_t samples = 0;
  for (std::size_t pos = 0; (pos = run.out.find("sample_file_marker+0x", pos)) != std::string::npos;
       ++pos) {
    ++samples;
  }
  EXPECT_EQ(samples, 7u) << run.out;
  // perf counts the AUX records' flags.
  EXPECT_NE(run.err.find("AUX data lost 2 times out of 6"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace userperf::perfdata
