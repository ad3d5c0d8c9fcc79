// Running programs the way bpf_conformance's tests expect: r1 = the test's memory (or 0), r2 =
// its length, r10 = a 512-byte stack, helper 5 = uBPF's "unwind" (returns its first argument and
// ends the program when that is 0), and an instruction budget so a bad program cannot hang.
// Shared by `userperf bpf conformance` and the plugin executable.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bpf/isa/insn.hpp"
#include "bpf/isa/opcode_facts.hpp"
#include "bpf/vm/interpreter.hpp"
#include "support/expected.hpp"

namespace userperf::bpf {

inline constexpr std::uint64_t kConformanceBudget = 10'000'000;
inline constexpr std::int32_t kUnwindHelper = 5;

// Helper 5 of the suite: returns r1 and ends the program when r1 is 0.
std::uint64_t conformance_unwind_helper(std::uint64_t r1, std::uint64_t, std::uint64_t,
                                        std::uint64_t, std::uint64_t, CallContext& call);

// Loads and runs `insns` over `memory` (written in place). A program the interpreter refuses is
// an Error; a run that ends other than kOk / kAborted is reported in the RunResult.
Expected<RunResult> run_conformance_program(std::span<const Insn> insns,
                                            std::span<std::uint8_t> memory);

enum class Verdict : std::uint8_t { kPass, kFail, kSkip, kError };
const char* to_string(Verdict verdict);  // "PASS", "FAIL", "SKIP", "ERROR"

// Runs one program the way run_conformance_program does, on some tier.
using ConformanceRunner = Expected<RunResult> (*)(std::span<const Insn> insns,
                                                  std::span<std::uint8_t> memory);

struct ConformanceSelection {
  CpuVersion cpu_version = CpuVersion::kV4;
  std::uint32_t groups = kAllGroups;
  // nullptr: the interpreter (run_conformance_program); the JIT passes its own (bpf/jit).
  ConformanceRunner runner = nullptr;
};

struct ConformanceOutcome {
  Verdict verdict = Verdict::kError;
  std::string detail;       // why it failed, was skipped or errored; "" for a pass
  std::vector<Insn> insns;  // the assembled program, when it assembled
  std::vector<std::uint8_t> memory;
  ConformanceInfo needs;  // the program's cpu version and groups
};

// One `.data` file's text: parse, assemble, skip by version/group as the runner does, run, and
// compare r0 (or the error text) with the expectation.
ConformanceOutcome run_conformance_test(std::string_view file_text,
                                        const ConformanceSelection& selection);

}  // namespace userperf::bpf
