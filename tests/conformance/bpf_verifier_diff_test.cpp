// The differential verifier corpus (docs/bpf-verifier-corpus.md): every program of
// tests/data/bpf/verifier_corpus is loaded into the running kernel as BPF_PROG_TYPE_PERF_EVENT
// and verified by userperf; both must give the verdict recorded in the file (accept, or reject
// with the kernel's errno). Programs where userperf deliberately differs are listed in
// intended_disagreements() with the reason, and must keep differing.
//
// USERPERF_VERIFIER_CORPUS_RECORD=1 rewrites each file's `expect:` line with the kernel's
// verdict (how a new program gets its expectation: write `expect: ?`, run with it, review).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "bpf/loader/elf_loader.hpp"
#include "bpf/verifier/verifier.hpp"
#include "conformance/bpf_verifier_corpus_support.hpp"
#include "userperf/userperf.h"

namespace userperf::conformance::verifier_corpus {
namespace {

// Programs whose userperf verdict differs from the kernel's on purpose: name -> why.
const std::map<std::string, std::string>& intended_disagreements() {
  static const std::map<std::string, std::string> table = {
      {"106_map_ptr_deref",
       "the kernel lets programs read struct bpf_map through the map pointer (BTF); userperf's "
       "maps are not kernel objects, so the map pointer is not readable memory"},
  };
  return table;
}

bool record_mode() {
  const char* value = std::getenv("USERPERF_VERIFIER_CORPUS_RECORD");
  return value != nullptr && std::string(value) == "1";
}

// The last lines of a verifier log: the reason is at the end.
std::string log_tail(const std::string& log, std::size_t lines = 6) {
  std::size_t position = log.size();
  while (position > 0 && log[position - 1] == '\n') --position;
  for (std::size_t seen = 0; position > 0; --position) {
    if (log[position - 1] == '\n' && ++seen == lines) break;
  }
  return log.substr(position);
}

const std::vector<CorpusEntry>& corpus() {
  static const std::vector<CorpusEntry> entries = list_corpus();
  return entries;
}

std::vector<std::size_t> corpus_indexes() {
  std::vector<std::size_t> indexes(corpus().size());
  for (std::size_t i = 0; i < indexes.size(); ++i) indexes[i] = i;
  return indexes;
}

struct UserperfOutcome {
  bool broken = false;  // the file could not be turned into an object (message in log)
  Verdict verdict;
  std::string log;
};

// Assembly: the corpus's own image; C: userperf's ELF loader. Then userperf's verifier on the
// object's one program, with the object's licence and maps. Verdicts are taken at log level 0
// (a path log of a 1M-instruction program is large); level 1 explains a mismatch.
UserperfOutcome userperf_verify(const CorpusEntry& program, std::uint32_t log_level = 0) {
  Expected<bpf::ObjectImage> image = program.kind == SourceKind::kAssembly
                                         ? assembly_image(program)
                                         : bpf::load_elf_file(c_object_path(program));
  UserperfOutcome outcome;
  if (!image) {
    outcome.broken = true;
    outcome.log = image.error().message;
    return outcome;
  }
  if (image->programs.size() != 1) {
    outcome.broken = true;
    outcome.log =
        "expected one program, the loader found " + std::to_string(image->programs.size());
    return outcome;
  }
  bpf::VerifyOptions options;
  options.prog_type = BPF_PROG_TYPE_PERF_EVENT;
  options.gpl_compatible = bpf::license_is_gpl_compatible(image->license);
  options.maps = &image->maps;
  options.log_level = log_level;
  options.kernel_btf = image->kernel_btf.get();
  const bpf::VerifyResult result = bpf::verify(image->programs.front(), options);
  outcome.verdict = Verdict{result.accepted, result.accepted ? 0 : result.error};
  outcome.log = result.log;
  return outcome;
}

class VerifierCorpus : public ::testing::TestWithParam<std::size_t> {
 protected:
  const CorpusEntry& entry() const { return corpus()[GetParam()]; }
};

TEST_P(VerifierCorpus, KernelGivesTheRecordedVerdict) {
  const CorpusEntry& program = entry();
  const KernelOutcome kernel = kernel_load(program);
  ASSERT_NE(kernel.status, KernelOutcome::Status::kBroken) << program.path << ": " << kernel.log;
  if (kernel.status == KernelOutcome::Status::kUnavailable) {
    GTEST_SKIP() << "the kernel refuses bpf() here (" << format_verdict(kernel.verdict)
                 << "): no kernel verdict for " << program.name;
  }
  if (record_mode() && kernel.verdict != program.expect) {
    record_expectation(program, kernel.verdict);
    std::printf("recorded %s: %s\n", program.name.c_str(), format_verdict(kernel.verdict).c_str());
    return;
  }
  ASSERT_TRUE(program.expect.has_value())
      << program.path << " has `expect: ?`; the kernel says " << format_verdict(kernel.verdict)
      << " (run with USERPERF_VERIFIER_CORPUS_RECORD=1 to record it)";
  EXPECT_EQ(format_verdict(kernel.verdict), format_verdict(*program.expect))
      << program.path << " (" << program.why << ")\nkernel log:\n"
      << log_tail(kernel.log);
}

TEST_P(VerifierCorpus, UserperfGivesTheRecordedVerdict) {
  const CorpusEntry& program = entry();
  ASSERT_TRUE(program.expect.has_value()) << program.path << " has no measured expectation yet";
  const UserperfOutcome userperf = userperf_verify(program);
  ASSERT_FALSE(userperf.broken) << program.path << ": " << userperf.log;
  const auto intended = intended_disagreements().find(program.name);
  if (intended != intended_disagreements().end()) {
    EXPECT_NE(format_verdict(userperf.verdict), format_verdict(*program.expect))
        << program.name << " is listed as an intended disagreement (" << intended->second
        << ") but userperf now agrees with the kernel: remove it from the table";
    return;
  }
  if (userperf.verdict == *program.expect) return;
  // Both logs, for whoever fixes the verifier: the kernel's says which rule it applied.
  const KernelOutcome kernel = kernel_load(program);
  ADD_FAILURE() << program.path << " (" << program.why
                << ")\n  kernel:   " << format_verdict(*program.expect)
                << "\n  userperf: " << format_verdict(userperf.verdict) << "\nuserperf log:\n"
                << log_tail(userperf_verify(program, 1).log) << "\nkernel log:\n"
                << (kernel.status == KernelOutcome::Status::kVerdict ? log_tail(kernel.log)
                                                                     : "(unavailable)");
}

INSTANTIATE_TEST_SUITE_P(Corpus, VerifierCorpus, ::testing::ValuesIn(corpus_indexes()),
                         [](const ::testing::TestParamInfo<std::size_t>& param) {
                           return "p" + corpus()[param.param].name;
                         });

// The whole corpus in one pass, userperf side: the summary line, the corpus's size, and a table
// that names only programs that exist.
TEST(VerifierCorpusSummary, EveryProgramAgreesOrIsAnIntendedDisagreement) {
  std::set<std::string> names;
  std::size_t agree = 0;
  std::size_t intended = 0;
  std::string disagreements;
  for (const CorpusEntry& program : corpus()) {
    names.insert(program.name);
    if (!program.expect) continue;
    const UserperfOutcome userperf = userperf_verify(program);
    const bool same = !userperf.broken && userperf.verdict == *program.expect;
    if (intended_disagreements().count(program.name) != 0 && !same) {
      ++intended;
    } else if (same) {
      ++agree;
    } else {
      disagreements +=
          "  " + program.name + ": kernel " + format_verdict(*program.expect) + ", userperf " +
          (userperf.broken ? "could not load it" : format_verdict(userperf.verdict)) + "\n";
    }
  }
  std::printf("verifier corpus: %zu programs, %zu agree, %zu intended differences\n",
              corpus().size(), agree, intended);
  EXPECT_GE(corpus().size(), 120u);
  EXPECT_EQ(agree + intended, corpus().size()) << "disagreements:\n" << disagreements;
  for (const auto& [name, reason] : intended_disagreements()) {
    EXPECT_EQ(names.count(name), 1u)
        << "the intended-disagreement table names " << name << ", which is not in the corpus";
  }
}

}  // namespace
}  // namespace userperf::conformance::verifier_corpus
