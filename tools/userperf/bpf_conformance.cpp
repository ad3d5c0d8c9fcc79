// `userperf bpf conformance [DIR]`: runs bpf_conformance's .data files on the interpreter with the
// suite's runner rules and prints one PASS/FAIL/SKIP/ERROR line per file, then "N passed, N
// failed".
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "bpf/isa/disassembler.hpp"
#include "bpf/isa/encoding.hpp"
#include "bpf/jit/jit.hpp"
#include "bpf/jit/jit_conformance.hpp"
#include "bpf/vm/conformance.hpp"
#include "commands.hpp"

#ifndef USERPERF_BPF_CONFORMANCE_DIR
#error "USERPERF_BPF_CONFORMANCE_DIR must name the suite (the top CMakeLists.txt defines it)"
#endif

namespace userperf::cli {
namespace {

namespace fs = std::filesystem;
using namespace userperf::bpf;

struct ConformanceOptions {
  std::string dir;
  std::string cpu_version = "v4";
  std::string include_regex;
  std::string exclude_regex;
  bool verbose = false;
  bool jit = false;
};

// ../shared/conformance/bpf from the current directory, else the suite the build found.
fs::path default_suite_dir() {
  const fs::path relative = fs::path("..") / "shared" / "conformance" / "bpf";
  std::error_code ec;
  if (fs::is_directory(relative, ec)) return relative;
  return fs::path(USERPERF_BPF_CONFORMANCE_DIR);
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int run(const ConformanceOptions& options) {
  auto version = parse_cpu_version(options.cpu_version);
  if (!version) {
    std::fprintf(stderr, "bpf conformance: unknown cpu version '%s' (v1..v4)\n",
                 options.cpu_version.c_str());
    return 2;
  }
  std::optional<std::regex> include, exclude;
  try {
    if (!options.include_regex.empty()) include.emplace(options.include_regex);
    if (!options.exclude_regex.empty()) exclude.emplace(options.exclude_regex);
  } catch (const std::regex_error& e) {
    std::fprintf(stderr, "bpf conformance: bad regex: %s\n", e.what());
    return 2;
  }
  const fs::path dir = options.dir.empty() ? default_suite_dir() : fs::path(options.dir);
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".data") files.push_back(it->path());
  }
  if (ec || files.empty()) {
    std::fprintf(stderr, "bpf conformance: no .data files in %s%s%s\n", dir.c_str(), ec ? ": " : "",
                 ec ? ec.message().c_str() : "");
    return 2;
  }
  std::sort(files.begin(), files.end());

  if (options.jit && !jit_supported()) {
    std::fprintf(stderr, "bpf conformance: --jit: the JIT supports x86-64 only\n");
    return 2;
  }
  const ConformanceSelection selection{*version, kAllGroups,
                                       options.jit ? run_conformance_program_jit : nullptr};
  int passed = 0, failed = 0, skipped = 0;
  for (const fs::path& path : files) {
    const std::string name = path.filename().string();
    if ((include && !std::regex_search(name, *include)) ||
        (exclude && std::regex_search(name, *exclude))) {
      std::printf("SKIP: %s: filtered out\n", name.c_str());
      ++skipped;
      continue;
    }
    ConformanceOutcome outcome;
    if (auto text = read_file(path)) {
      outcome = run_conformance_test(*text, selection);
    } else {
      outcome.detail = "cannot read the file";
    }
    std::printf("%s: %s%s%s", to_string(outcome.verdict), name.c_str(),
                outcome.detail.empty() ? "" : ": ", outcome.detail.c_str());
    if (options.verbose && !outcome.insns.empty()) {
      std::printf(" [%s, %s]", cpu_version_name(outcome.needs.cpu_version),
                  group_names(outcome.needs.groups).c_str());
    }
    std::printf("\n");
    switch (outcome.verdict) {
      case Verdict::kPass:
        ++passed;
        break;
      case Verdict::kSkip:
        ++skipped;
        break;
      default:
        ++failed;
        break;
    }
    if (options.verbose &&
        (outcome.verdict == Verdict::kFail || outcome.verdict == Verdict::kError)) {
      if (!outcome.memory.empty()) {
        std::printf("  memory: %s\n", format_hex_bytes(outcome.memory).c_str());
      }
      std::istringstream listing(disassemble(outcome.insns));
      for (std::string line; std::getline(listing, line);) std::printf("  %s\n", line.c_str());
    }
  }
  if (skipped > 0) std::printf("%d skipped\n", skipped);
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace

void add_bpf_conformance_command(CLI::App& bpf, int& exit_code) {
  auto options = std::make_shared<ConformanceOptions>();
  CLI::App* cmd = bpf.add_subcommand(
      "conformance", "Run the bpf_conformance suite's .data files on the interpreter");
  cmd->add_option("dir", options->dir,
                  "Directory of .data files (default: ../shared/conformance/bpf, then the one "
                  "found at build time)");
  cmd->add_option("--cpu-version", options->cpu_version,
                  "Highest cpu version to run (v1..v4); tests needing more are skipped")
      ->capture_default_str();
  cmd->add_option("--include-regex", options->include_regex, "Run only files whose name matches");
  cmd->add_option("--exclude-regex", options->exclude_regex, "Skip files whose name matches");
  cmd->add_flag("-v,--verbose", options->verbose,
                "Show each program's cpu version and groups, and the listing of failures");
  cmd->add_flag("--jit", options->jit,
                "Run on the x86-64 JIT (checked mode: the programs are not verified)");
  cmd->callback([options, &exit_code] { exit_code = run(*options); });
}

}  // namespace userperf::cli
