// The runtime hands the verifier's per-function depths to the JIT: a clang-compiled program with
// a 480-byte main function and a 48-byte bpf_loop callback (the corpus's 392) gets those frames,
// 528 bytes of stack per run instead of kMaxCallFrames * 512, and runs.
#include <gtest/gtest.h>
#include <linux/bpf.h>

#include <string>

#include "bpf/jit/jit.hpp"
#include "bpf/loader/elf_loader.hpp"
#include "bpf/perf/perf_event_ctx.hpp"
#include "bpf/perf/perf_helpers.hpp"
#include "bpf/runtime/bpf_object.hpp"

namespace userperf::bpf {
namespace {

TEST(RuntimeJitFrames, AVerifiedProgramRunsInTheFramesTheVerifierMeasured) {
  if (!jit_supported() || !jit_allowed_by_environment()) GTEST_SKIP() << "no JIT here";
  const std::string path =
      std::string(USERPERF_BPF_OBJECT_DIR) + "/corpus/392_c_loop_callback_big_stack.bpf.o";
  auto image = load_elf_file(path);
  ASSERT_TRUE(image) << image.error().message;
  auto object = BpfObject::create(std::move(*image), nullptr);
  ASSERT_TRUE(object) << object.error().message;
  ProgramLoadOptions options;
  options.helpers = perf_event_helper_table();
  options.ctx_layout = &perf_event_ctx_layout();
  auto program = LoadedProgram::load(*object, 0, options);
  ASSERT_TRUE(program) << program.error().message;
  const auto& stacks = (*program)->verdict().function_stacks;
  ASSERT_EQ(stacks.size(), 2u);
  EXPECT_EQ(stacks[0].depth, 480u);  // the kernel's "stack depth 504+48" less bpf_loop's inlining
  EXPECT_EQ(stacks[1].depth, 48u);
  ASSERT_TRUE((*program)->jitted());
  EXPECT_EQ((*program)->jit_code()->stack_reserve(), 480u + 48u);

  core::SampleData sample;
  sample.period = 7;
  PerfEventRunCtx ctx{&sample, kNoRegs, nullptr, nullptr};
  const PerfEventRunRegions regions(ctx);
  const RunResult result = (*program)->run(&ctx, regions.regions, &ctx);
  EXPECT_EQ(result.status, RunStatus::kOk) << to_string(result.status) << " at " << result.pc;
}

}  // namespace
}  // namespace userperf::bpf
