// Temporary files for the perfdata tests, whole-file reads, and the writer or reader a test needs.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "perfdata/reader.hpp"
#include "perfdata/writer.hpp"

namespace userperf::perfdata::testing {

// A fresh directory under TMPDIR (or /tmp), removed with its files at destruction.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/perfdata-XXXXXX";
    path_ = mkdtemp(pattern.data()) != nullptr ? pattern : std::string();
  }
  ~TempDir() {
    if (!path_.empty()) std::system(("rm -rf '" + path_ + "'").c_str());
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// One run of perf (Debian linux-perf) with its exit code and both streams.
struct PerfRun {
  int exit_code = -1;
  std::string out, err;
};

// Runs `perf ARGS` with its output in files of `dir`. PERF_PAGER=cat and no tty: never an
// interactive pager or TUI.
inline PerfRun run_perf(const TempDir& dir, const std::string& args) {
  const std::string out = dir.file("perf.out"), err = dir.file("perf.err");
  const std::string command = "PERF_PAGER=cat perf " + args + " >'" + out + "' 2>'" + err + "'";
  const int status = std::system(command.c_str());
  PerfRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const auto o = read_file(out), e = read_file(err);
  run.out.assign(o.begin(), o.end());
  run.err.assign(e.begin(), e.end());
  return run;
}

// The writer or reader of a test that expects it to open: nullptr, and the test failed with the
// error's message, when it does not.
inline std::unique_ptr<Writer> create_writer(const std::string& path) {
  Expected<std::unique_ptr<Writer>> writer = Writer::create(path);
  if (writer) return std::move(*writer);
  ADD_FAILURE() << writer.error().message;
  return nullptr;
}

inline std::unique_ptr<Reader> open_reader(const std::string& path) {
  Expected<std::unique_ptr<Reader>> reader = Reader::open(path);
  if (reader) return std::move(*reader);
  ADD_FAILURE() << reader.error().message;
  return nullptr;
}

inline std::unique_ptr<Reader> reader_from(std::vector<std::uint8_t> bytes) {
  Expected<std::unique_ptr<Reader>> reader = Reader::from_bytes(std::move(bytes));
  if (reader) return std::move(*reader);
  ADD_FAILURE() << reader.error().message;
  return nullptr;
}

}  // namespace userperf::perfdata::testing
