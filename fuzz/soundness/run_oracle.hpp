// The soundness oracle: a program userperf's verifier accepted must never touch memory outside
// its regions. Each program is loaded as the overflow path loads it (LoadedProgram: verified, ctx
// loads rewritten, map references fixed up, JIT-compiled) and run several times, with varied
// sample and map contents, on the checked interpreter: every load and store is checked against
// regions narrower than the product's (the ctx's two pointers the rewritten loads read, the
// sample's addr and period, the registers, each map's one value), every helper's memory
// arguments against the run's regions, and the ctx, sample and registers lie between PROT_NONE
// guard pages. A run that stops for any reason but its exit is a finding. Deterministic programs
// then run on the JIT with the same contents, whose r0 must equal the interpreter's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bpf/isa/insn.hpp"
#include "bpf/isa/program_image.hpp"

namespace userperf::soundness {

// An image of one perf_event program over the campaign's maps, licence GPL (what both userperf
// and the kernel load).
bpf::ObjectImage campaign_image(const std::vector<bpf::Insn>& insns);

struct OracleResult {
  bool accepted = false;
  int error = 0;                      // rejected: the verifier's errno
  std::string reason;                 // rejected: the log's last line
  std::string log;                    // the verifier's log
  std::vector<std::string> findings;  // accepted: soundness findings (empty: none)
  int runs = 0;                       // interpreter runs made
  int checked_jit_runs = 0;           // runs of the JIT's checked mode
  int jit_runs = 0;                   // runs of the product's (unchecked) JIT code compared
};

// A verifier log's last non-empty line: its reason.
std::string last_line(const std::string& log);

class SoundnessOracle {
 public:
  SoundnessOracle();
  ~SoundnessOracle();
  SoundnessOracle(const SoundnessOracle&) = delete;
  SoundnessOracle& operator=(const SoundnessOracle&) = delete;

  // `runs` runs with contents from `seed`. `report` is what a SIGSEGV prints (and writes to
  // `crash_path` when not empty) before the process exits with status 3: the program.
  OracleResult check(const std::vector<bpf::Insn>& insns, int runs, std::uint64_t seed,
                     const std::string& report, const std::string& crash_path);
  // The verifier's log level (VerifyOptions::log_level): 2 logs every instruction's state.
  void set_log_level(std::uint32_t level) { log_level_ = level; }

 private:
  struct Memory;
  std::unique_ptr<Memory> memory_;
  std::uint32_t log_level_ = 1;
};

}  // namespace userperf::soundness
