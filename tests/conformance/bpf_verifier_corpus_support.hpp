// The differential verifier corpus (tests/data/bpf/verifier_corpus, described in
// docs/bpf-verifier-corpus.md): small BPF_PROG_TYPE_PERF_EVENT programs, each with the verdict
// the real kernel gives it. This part reads the corpus and asks the kernel; the test asks
// userperf's verifier and compares.
//
// A program is either assembly (`NNN_name.asm`, header directives in `#` comments:
//   # license: GPL
//   # map: NAME TYPE key=K value=V entries=E [flags=0xF]
//   # expect: accept | reject ERRNO-NAME | ?      (? = not measured yet)
//   # why: the rule it exercises
// ) or C (`NNN_name.bpf.c`, compiled into USERPERF_BPF_OBJECT_DIR/corpus/NNN_name.bpf.o, the
// verdict in a `// expect: ...` line).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bpf/isa/program_image.hpp"
#include "support/expected.hpp"

namespace userperf::conformance::verifier_corpus {

// A verdict: accepted, or rejected with the errno BPF_PROG_LOAD returns.
struct Verdict {
  bool accepted = false;
  int error = 0;  // positive errno when rejected
  bool operator==(const Verdict&) const = default;
};
// "accept" or "reject EACCES"; parse_verdict reads the same text (nullopt for "?" or garbage).
std::string format_verdict(const Verdict& verdict);
std::optional<Verdict> parse_verdict(std::string_view text);

enum class SourceKind { kAssembly, kC };

struct CorpusEntry {
  std::string name;  // the file name without .asm / .bpf.c: "001_ctx_period_u64"
  std::string path;  // the source file
  SourceKind kind = SourceKind::kAssembly;
  std::optional<Verdict> expect;  // nullopt while the file says "expect: ?"
  std::string why;
};

// Every corpus file, sorted by name. Unreadable files or a bad `expect:` line throw
// std::runtime_error (the corpus is ours: a malformed file is a bug to fix, not to skip).
std::vector<CorpusEntry> list_corpus();

// An assembly entry as the object a loader would produce: license, maps from `# map:` lines
// (in order), one perf_event program. EINVAL with the line for a bad directive or instruction.
Expected<bpf::ObjectImage> assembly_image(const CorpusEntry& entry);
// A C entry's compiled object: USERPERF_BPF_OBJECT_DIR/corpus/<name>.bpf.o.
std::string c_object_path(const CorpusEntry& entry);

struct KernelOutcome {
  enum class Status {
    kVerdict,      // the kernel accepted or rejected the program
    kUnavailable,  // bpf() itself is refused here (EPERM, ENOSYS): no verdict
    kBroken,       // the corpus file could not be turned into a program (log says why)
  };
  Status status = Status::kVerdict;
  Verdict verdict;
  std::string log;  // the verifier's log (or libbpf's messages) of a refused program
};
// Loads the entry into the running kernel as BPF_PROG_TYPE_PERF_EVENT: assembly through
// kernel_bpf::load_image_program, C through libbpf's bpf_object__open_file/bpf_object__load.
KernelOutcome kernel_load(const CorpusEntry& entry);

// Rewrites the entry's `expect:` line with `verdict` (the record mode of the test).
void record_expectation(const CorpusEntry& entry, const Verdict& verdict);

}  // namespace userperf::conformance::verifier_corpus
