// verifier_soundness: the verifier soundness campaign (docs/reliability.md). Generates structured
// programs (program_generator.hpp), runs every one userperf's verifier accepts on the checked
// interpreter between guard pages (run_oracle.hpp), and with --kernel loads each into the running
// kernel too, counting the four verdict combinations. Exit status: 0 clean; 1 a soundness
// finding or an unexplained "userperf accepts, kernel rejects" class; 2 bad usage; 3 a SIGSEGV
// (an access that escaped the checks), reported by the oracle.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bpf/isa/disassembler.hpp"
#include "program_generator.hpp"
#include "run_oracle.hpp"
#include "support/kernel_bpf.hpp"
#include "verdict_classes.hpp"

namespace {

using namespace userperf;
using soundness::OracleResult;

struct Options {
  long programs = -1;   // stop after this many (-1: no limit)
  double seconds = -1;  // stop after this long (-1: no limit)
  std::uint64_t seed = 0;
  bool seed_given = false;
  bool kernel = false;
  long only = -1;  // run only program number `only` of the seed's sequence
  int runs = 4;
  std::string save_dir;
  bool verbose = false;
};

void usage() {
  std::fprintf(stderr,
               "usage: verifier_soundness [--programs N] [--seconds S] [--seed S] [--kernel]\n"
               "                          [--save-dir DIR] [--runs R] [--only I] [--verbose]\n"
               "  Without --programs or --seconds: 1000 programs. --only I reruns program I of\n"
               "  --seed's sequence (as a finding names it).\n");
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--kernel") {
      o.kernel = true;
    } else if (a == "--verbose") {
      o.verbose = true;
    } else if (a == "--programs" && (v = next())) {
      o.programs = std::strtol(v, nullptr, 0);
    } else if (a == "--seconds" && (v = next())) {
      o.seconds = std::strtod(v, nullptr);
    } else if (a == "--seed" && (v = next())) {
      o.seed = std::strtoull(v, nullptr, 0);
      o.seed_given = true;
    } else if (a == "--save-dir" && (v = next())) {
      o.save_dir = v;
    } else if (a == "--runs" && (v = next())) {
      o.runs = static_cast<int>(std::strtol(v, nullptr, 0));
    } else if (a == "--only" && (v = next())) {
      o.only = std::strtol(v, nullptr, 0);
    } else {
      return false;
    }
  }
  if (o.programs < 0 && o.seconds < 0) o.programs = 1000;
  return o.runs > 0;
}

// The program in the verifier corpus's format (docs/bpf-verifier-corpus.md), with the finding.
std::string corpus_text(const std::vector<bpf::Insn>& insns, const std::string& why,
                        std::uint64_t seed, long index) {
  std::string out = "# license: GPL\n";
  std::vector<std::string> names;
  for (const bpf::MapSpec& m : soundness::campaign_maps()) {
    names.push_back(m.name);
    out += "# map: " + m.name + (m.type == BPF_MAP_TYPE_HASH ? " hash" : " array") +
           " key=" + std::to_string(m.key_size) + " value=" + std::to_string(m.value_size) +
           " entries=" + std::to_string(m.max_entries) + "\n";
  }
  out += "# expect: ?\n# why: verifier_soundness --seed " + std::to_string(seed) + " --only " +
         std::to_string(index) + ": " + why + "\n";
  bpf::DisassembleOptions d;
  d.helper_names = true;
  d.map_names = names;
  out += bpf::disassemble(insns, d);
  return out;
}

void save(const Options& o, const std::string& name, const std::string& text) {
  if (o.save_dir.empty()) return;
  std::ofstream(o.save_dir + "/" + name) << text;
}

struct Tally {
  long generated = 0, ours = 0, kernels = 0, runs = 0, checked_jit_runs = 0, jit_runs = 0,
       findings = 0;
  long both = 0, only_ours = 0, only_kernel = 0, neither = 0;
  std::map<std::string, long> ours_only_classes;    // userperf accepts, kernel rejects
  std::map<std::string, long> kernel_only_classes;  // userperf rejects, kernel accepts
  std::map<std::string, long> rejection_classes;    // every userperf rejection
  std::set<std::string> unexplained_classes;        // of ours_only_classes
  long unexplained_programs = 0;
  // class -> "seed/index" of its first program, per table (a class may be in two)
  std::map<std::string, std::string> ours_only_example, kernel_only_example, rejection_example;
};

void print_classes(const char* title, const std::map<std::string, long>& classes,
                   const std::map<std::string, std::string>& examples) {
  if (classes.empty()) return;
  std::printf("%s:\n", title);
  std::vector<std::pair<long, std::string>> sorted;
  for (const auto& [c, n] : classes) sorted.emplace_back(n, c);
  std::sort(sorted.rbegin(), sorted.rend());
  for (const auto& [n, c] : sorted) {
    std::printf("  %6ld  %s   [e.g. %s]\n", n, c.c_str(), examples.at(c).c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a finding is on the log even if a crash follows
  Options o;
  if (!parse(argc, argv, o)) {
    usage();
    return 2;
  }
  if (!o.seed_given)
    o.seed = std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32);
  std::printf("verifier_soundness: seed %" PRIu64 " (rerun: --seed %" PRIu64 ")\n", o.seed, o.seed);
  if (!o.save_dir.empty()) mkdir(o.save_dir.c_str(), 0755);

  bool kernel = o.kernel;
  if (kernel) {
    const std::vector<bpf::Insn> probe = {bpf::make_insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
                                          bpf::make_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)};
    auto loaded = testing::kernel_bpf::prog_load(BPF_PROG_TYPE_PERF_EVENT, probe, "GPL");
    if (loaded.fd >= 0) {
      testing::kernel_bpf::ScopedFd closing(loaded.fd);
    } else {
      std::printf("kernel comparison skipped: bpf(BPF_PROG_LOAD) refused (%s)\n",
                  std::strerror(loaded.error));
      kernel = false;
    }
  }

  soundness::ProgramGenerator generator(o.seed);
  soundness::SoundnessOracle oracle;
  if (o.verbose) oracle.set_log_level(2);
  Tally t;
  const auto start = std::chrono::steady_clock::now();
  for (long index = 0;; ++index) {
    if (o.programs >= 0 && t.generated >= o.programs) break;
    if (o.seconds >= 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >=
            o.seconds)
      break;
    std::vector<bpf::Insn> insns = generator.program();
    if (o.only >= 0 && index != o.only) {
      if (index > o.only) break;
      continue;
    }
    ++t.generated;
    const std::string where = std::to_string(o.seed) + "/" + std::to_string(index);
    const std::string report =
        corpus_text(insns, "SIGSEGV: an access escaped the checks", o.seed, index);
    const std::string crash_path =
        o.save_dir.empty() ? "" : o.save_dir + "/crash-" + std::to_string(index) + ".asm";
    const OracleResult ours = oracle.check(
        insns, o.runs, o.seed ^ (static_cast<std::uint64_t>(index) * 0x9e3779b97f4a7c15ULL), report,
        crash_path);
    t.runs += ours.runs;
    t.checked_jit_runs += ours.checked_jit_runs;
    t.jit_runs += ours.jit_runs;
    if (ours.accepted) {
      ++t.ours;
    } else if (const std::string c = soundness::verdict_class(ours.reason);
               t.rejection_classes[c]++ == 0) {
      t.rejection_example[c] = where;
    }
    for (const std::string& f : ours.findings) {
      ++t.findings;
      std::printf("SOUNDNESS FINDING (program %s): %s\n%s", where.c_str(), f.c_str(),
                  corpus_text(insns, f, o.seed, index).c_str());
      save(o, "finding-" + std::to_string(index) + ".asm", corpus_text(insns, f, o.seed, index));
    }
    if (o.verbose) {
      std::printf("--- program %s: userperf %s %s\n%s", where.c_str(),
                  ours.accepted ? "accepts" : "rejects", ours.reason.c_str(),
                  corpus_text(insns, "", o.seed, index).c_str());
    }
    if (!kernel) continue;
    const bpf::ObjectImage image = soundness::campaign_image(insns);
    auto theirs = testing::kernel_bpf::load_image_program(image, 0, BPF_PROG_TYPE_PERF_EVENT);
    const bool kernel_accepts = theirs.program.get() >= 0;
    if (kernel_accepts) ++t.kernels;
    if (o.verbose) {
      std::printf("    kernel %s\n--- userperf's log:\n%s\n--- the kernel's log:\n%s\n",
                  kernel_accepts ? "accepts" : "rejects", ours.log.c_str(), theirs.log.c_str());
    }
    if (ours.accepted && kernel_accepts) {
      ++t.both;
    } else if (!ours.accepted && !kernel_accepts) {
      ++t.neither;
    } else if (ours.accepted) {
      ++t.only_ours;
      const std::string c = soundness::verdict_class(soundness::last_line(theirs.log));
      const bool explained = soundness::explained_kernel_rejection(c, insns) != nullptr;
      if (!explained) ++t.unexplained_programs;
      if (t.ours_only_classes[c]++ == 0) t.ours_only_example[c] = where;
      if (!explained) {  // every such program: they are rare, and each needs a reason
        t.unexplained_classes.insert(c);
        std::printf("UNEXPLAINED: userperf accepts, the kernel rejects (program %s): %s\n%s",
                    where.c_str(), c.c_str(),
                    corpus_text(insns, "kernel: " + c, o.seed, index).c_str());
        save(o, "accept-reject-" + std::to_string(index) + ".asm",
             corpus_text(insns, "userperf accepts, the kernel rejects: " + c, o.seed, index));
      }
    } else {
      ++t.only_kernel;
      const std::string c = soundness::verdict_class(ours.reason);
      if (t.kernel_only_classes[c]++ == 0) {
        t.kernel_only_example[c] = where;
        save(o, "reject-accept-" + std::to_string(index) + ".asm",
             corpus_text(insns, "userperf rejects, the kernel accepts: " + c, o.seed, index));
      }
    }
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "programs %ld in %.1f s; userperf accepts %ld (%.1f%%); interpreter runs %ld, checked JIT "
      "runs %ld, JIT runs compared %ld; soundness findings %ld\n",
      t.generated, elapsed, t.ours, t.generated ? 100.0 * t.ours / t.generated : 0.0, t.runs,
      t.checked_jit_runs, t.jit_runs, t.findings);
  print_classes("userperf's rejections", t.rejection_classes, t.rejection_example);
  if (kernel) {
    std::printf(
        "kernel accepts %ld (%.1f%%)\n"
        "                 kernel accepts  kernel rejects\n"
        "userperf accepts %14ld  %14ld\n"
        "userperf rejects %14ld  %14ld\n",
        t.kernels, t.generated ? 100.0 * t.kernels / t.generated : 0.0, t.both, t.only_ours,
        t.only_kernel, t.neither);
    print_classes("userperf accepts, kernel rejects (the kernel's last log line)",
                  t.ours_only_classes, t.ours_only_example);
    for (const auto& [c, n] : t.ours_only_classes) {
      std::printf("  %s: %s\n", t.unexplained_classes.count(c) ? "UNEXPLAINED" : "explained",
                  c.c_str());
    }
    std::printf("  programs in no explained class: %ld\n", t.unexplained_programs);
    print_classes("userperf rejects, kernel accepts (userperf's last log line)",
                  t.kernel_only_classes, t.kernel_only_example);
  }
  const bool failed = t.findings > 0 || t.unexplained_programs > 0;
  std::printf("%s\n", failed ? "FAILED" : "OK");
  return failed ? 1 : 0;
}
