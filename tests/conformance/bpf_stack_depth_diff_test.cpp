// Each function's stack depth, userperf's verifier against the running kernel's: every corpus
// program both accept is loaded into the kernel once more with log_level BPF_LOG_STATS, whose log
// ends with "stack depth N+M+..." (print_verification_stats: subprog_info[i].stack_depth, main
// first); userperf's VerifyResult::function_stacks must give the same numbers in the same order.
// The JIT sizes its frames from them (docs/bpf.md, "The x86-64 JIT").
//
// One transformation of the kernel's is not userperf's: optimize_bpf_loop inlines a bpf_loop call
// whose flags and callback are constant, with three 8-byte slots of the calling function's stack
// for r6..r8, and adds those 24 bytes to that function's depth before the stats line is printed.
// userperf's JIT keeps bpf_loop's state on the native stack, so its depth has no such slots: a
// function that calls bpf_loop may show 24 bytes more in the kernel's line, never any other
// difference.
#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bpf/loader/elf_loader.hpp"
#include "bpf/verifier/verifier.hpp"
#include "conformance/bpf_verifier_corpus_support.hpp"
#include "support/kernel_bpf.hpp"

namespace userperf::conformance::verifier_corpus {
namespace {

// "N+M+..." from a stats log, or "" when it has no such line.
std::string kernel_depths(const std::string& log) {
  const std::string key = "stack depth ";
  const std::size_t at = log.rfind(key);
  if (at == std::string::npos) return "";
  const std::size_t end = log.find('\n', at);
  return log.substr(at + key.size(),
                    end == std::string::npos ? std::string::npos : end - at - key.size());
}

// The kernel's stats log of an entry it accepts ("" when bpf() is refused or the load fails).
std::string kernel_stats_log(const CorpusEntry& entry) {
  if (entry.kind == SourceKind::kAssembly) {
    auto image = assembly_image(entry);
    if (!image) return "";
    return testing::kernel_bpf::load_image_program(*image, 0, BPF_PROG_TYPE_PERF_EVENT, true)
        .stats_log;
  }
  bpf_object* object = bpf_object__open_file(c_object_path(entry).c_str(), nullptr);
  if (object == nullptr) return "";
  std::string log(std::size_t{1} << 16, '\0');
  bpf_program* program = nullptr;
  bpf_object__for_each_program(program, object) {
    bpf_program__set_type(program, BPF_PROG_TYPE_PERF_EVENT);
    bpf_program__set_log_level(program, 4);  // BPF_LOG_STATS
    bpf_program__set_log_buf(program, log.data(), log.size());
  }
  const int error = bpf_object__load(object);
  bpf_object__close(object);
  if (error != 0) return "";
  log.resize(std::char_traits<char>::length(log.c_str()));
  return log;
}

// Programs whose function lists differ for a reason outside the verifier: name -> why.
const std::map<std::string, std::string>& known_differences() {
  static const std::map<std::string, std::string> table = {
      {"428_c_global_never_called",
       "libbpf leaves out a global function nothing calls; userperf's loader links it (depth 0), "
       "so userperf lists one function more"},
  };
  return table;
}

constexpr std::uint32_t kBpfLoopInlineSlots = 24;  // optimize_bpf_loop's stack_depth_extra

// Each function's depth, and whether it calls bpf_loop.
struct UserperfDepths {
  std::vector<std::uint32_t> depth;
  std::vector<bool> calls_loop;
  std::string error;
};

UserperfDepths userperf_depths(const CorpusEntry& entry) {
  Expected<bpf::ObjectImage> image = entry.kind == SourceKind::kAssembly
                                         ? assembly_image(entry)
                                         : bpf::load_elf_file(c_object_path(entry));
  UserperfDepths out;
  if (!image || image->programs.size() != 1) {
    out.error = "(no image)";
    return out;
  }
  bpf::VerifyOptions options;
  options.gpl_compatible = bpf::license_is_gpl_compatible(image->license);
  options.maps = &image->maps;
  options.log_level = 0;
  const bpf::VerifyResult result = bpf::verify(image->programs.front(), options);
  if (!result.accepted) {
    out.error = "(rejected)";
    return out;
  }
  // No ctx layout: the starts are in the image's own instructions.
  const std::vector<bpf::Insn>& insns = image->programs.front().insns;
  const auto& stacks = result.function_stacks;
  for (std::size_t f = 0; f < stacks.size(); ++f) {
    const std::size_t end = f + 1 < stacks.size() ? stacks[f + 1].start : insns.size();
    bool loop = false;
    for (std::size_t i = stacks[f].start; i < end; ++i) {
      loop = loop || (insns[i].code == (BPF_JMP | BPF_CALL) && insns[i].src_reg == 0 &&
                      insns[i].imm == BPF_FUNC_loop);
    }
    out.depth.push_back(stacks[f].depth);
    out.calls_loop.push_back(loop);
  }
  return out;
}

std::vector<std::uint32_t> parse_depths(const std::string& text) {
  std::vector<std::uint32_t> out;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t used = 0;
    out.push_back(static_cast<std::uint32_t>(std::stoul(text.substr(at), &used)));
    at += used + 1;  // the '+'
  }
  return out;
}

std::string join(const std::vector<std::uint32_t>& depths) {
  std::string out;
  for (std::uint32_t d : depths) out += (out.empty() ? "" : "+") + std::to_string(d);
  return out;
}

TEST(StackDepthCorpus, EveryAcceptedProgramHasTheKernelsDepthPerFunction) {
  std::size_t compared = 0;
  std::size_t with_calls = 0;
  std::size_t loop_inlined = 0;
  std::string mismatches;
  for (const CorpusEntry& entry : list_corpus()) {
    if (!entry.expect || !entry.expect->accepted) continue;
    const std::string log = kernel_stats_log(entry);
    const std::string kernel = kernel_depths(log);
    if (kernel.empty()) continue;  // bpf() refused here, or a program only userperf loads
    const UserperfDepths userperf = userperf_depths(entry);
    if (userperf.error == "(rejected)") continue;  // a verdict difference: the corpus test's
    const std::vector<std::uint32_t> kernel_list = parse_depths(kernel);
    ++compared;
    if (kernel_list.size() > 1) ++with_calls;
    bool same = userperf.error.empty() && kernel_list.size() == userperf.depth.size();
    std::size_t inlined = 0;
    for (std::size_t f = 0; same && f < kernel_list.size(); ++f) {
      const bool plain = kernel_list[f] == userperf.depth[f];
      const bool loop_slots =
          userperf.calls_loop[f] && kernel_list[f] == userperf.depth[f] + kBpfLoopInlineSlots;
      same = plain || loop_slots;
      if (loop_slots) ++inlined;
    }
    loop_inlined += inlined != 0 ? 1 : 0;
    const bool known = known_differences().count(entry.name) != 0;
    if (same == known) {
      mismatches +=
          "  " + entry.name + ": kernel " + kernel + ", userperf " +
          (userperf.error.empty() ? join(userperf.depth) : userperf.error) +
          (known ? " (listed as a known difference: " + known_differences().at(entry.name) + ")"
                 : "") +
          "\n";
    }
  }
  if (compared == 0) GTEST_SKIP() << "no kernel stats (bpf() refused?)";
  std::printf(
      "stack depth: %zu programs compared, %zu with more than one function, %zu with the kernel's "
      "bpf_loop inlining slots\n",
      compared, with_calls, loop_inlined);
  EXPECT_TRUE(mismatches.empty()) << mismatches;
  EXPECT_GE(with_calls, 10u) << "the corpus's programs with subprograms and callbacks";
}

}  // namespace
}  // namespace userperf::conformance::verifier_corpus
