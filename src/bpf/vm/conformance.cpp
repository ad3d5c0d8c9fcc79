#include "bpf/vm/conformance.hpp"

#include "bpf/isa/assembler.hpp"
#include "bpf/isa/conformance_file.hpp"
#include "bpf/isa/encoding.hpp"
#include "support/hex.hpp"

namespace userperf::bpf {

std::uint64_t conformance_unwind_helper(std::uint64_t r1, std::uint64_t, std::uint64_t,
                                        std::uint64_t, std::uint64_t, CallContext& call) {
  if (r1 == 0) call.abort = true;
  return r1;
}

Expected<RunResult> run_conformance_program(std::span<const Insn> insns,
                                            std::span<std::uint8_t> memory) {
  InterpreterOptions options;
  options.helpers.resize(kUnwindHelper + 1);
  options.helpers[kUnwindHelper] = conformance_unwind_helper;
  options.instruction_budget = kConformanceBudget;
  auto interpreter = Interpreter::load(insns, std::move(options));
  if (!interpreter) return interpreter.error();
  const auto begin = reinterpret_cast<std::uintptr_t>(memory.data());
  const MemoryRegion region{begin, begin + memory.size(), true};
  std::span<const MemoryRegion> regions;
  if (!memory.empty()) regions = std::span<const MemoryRegion>(&region, 1);
  return (*interpreter)->run(memory.empty() ? 0 : begin, memory.size(), regions, nullptr);
}

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass:
      return "PASS";
    case Verdict::kFail:
      return "FAIL";
    case Verdict::kSkip:
      return "SKIP";
    case Verdict::kError:
      return "ERROR";
  }
  return "?";
}

ConformanceOutcome run_conformance_test(std::string_view file_text,
                                        const ConformanceSelection& selection) {
  ConformanceOutcome outcome;
  auto file = parse_conformance_file(file_text);
  if (!file) {
    outcome.detail = "bad test file: " + file.error().message;
    return outcome;
  }
  auto insns = assemble(file->asm_text, {.first_line = file->asm_first_line});
  if (!insns) {
    outcome.detail = "does not assemble: " + insns.error().message;
    return outcome;
  }
  outcome.insns = std::move(*insns);
  if (outcome.insns.empty()) {
    outcome.verdict = Verdict::kSkip;
    outcome.detail = "no instructions";
    return outcome;
  }
  outcome.needs = program_conformance(outcome.insns);
  if (outcome.needs.cpu_version > selection.cpu_version) {
    outcome.verdict = Verdict::kSkip;
    outcome.detail = std::string("needs cpu ") + cpu_version_name(outcome.needs.cpu_version);
    return outcome;
  }
  if (std::uint32_t missing = outcome.needs.groups & ~selection.groups) {
    outcome.verdict = Verdict::kSkip;
    outcome.detail = "needs group " + group_names(missing);
    return outcome;
  }
  outcome.memory = file->memory;
  std::vector<std::uint8_t> memory = file->memory;
  auto run = selection.runner ? selection.runner(outcome.insns, memory)
                              : run_conformance_program(outcome.insns, memory);
  std::string error;
  if (!run) {
    error = run.error().message;
  } else if (run->status != RunStatus::kOk && run->status != RunStatus::kAborted) {
    error = std::string(to_string(run->status)) + " at instruction " + std::to_string(run->pc);
    if (run->status == RunStatus::kFault)
      error += " (address " + support::hex(run->fault_addr) + ")";
  }
  if (file->error) {
    outcome.verdict = error == *file->error ? Verdict::kPass : Verdict::kFail;
    if (outcome.verdict == Verdict::kFail) {
      outcome.detail = "expected error '" + *file->error + "', got " +
                       (error.empty() ? "r0 = " + support::hex(run->r0) : "'" + error + "'");
    }
    return outcome;
  }
  if (!error.empty()) {
    outcome.detail = error;
    return outcome;  // kError
  }
  if (!file->result) {
    outcome.detail = "the file has no result";
    return outcome;
  }
  if (run->r0 == *file->result) {
    outcome.verdict = Verdict::kPass;
  } else {
    outcome.verdict = Verdict::kFail;
    outcome.detail = "expected " + support::hex(*file->result) + ", got " + support::hex(run->r0);
  }
  return outcome;
}

}  // namespace userperf::bpf
