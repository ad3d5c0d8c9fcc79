// bpf_tail_call: its prototype (ctx, a PROG_ARRAY, any index; no result), the map's exclusivity,
// what is readable after a failed call, and the stack rule for tail calls in subprograms. Each
// verdict is also the kernel's when it can be asked (verifier_test_support.hpp).
#include <linux/bpf.h>

#include <string>

#include "bpf/verifier/helper_protos.hpp"
#include "verifier_test_support.hpp"

namespace userperf::bpf::verifier_test {
namespace {

constexpr const char* kTailCall = R"(
    lddw %r2, map:progs
    mov %r3, 0
    call tail_call
)";

TEST(VerifierTailCall, Prototype) {
  const HelperProto* proto = perf_event_helper_proto(BPF_FUNC_tail_call);
  ASSERT_NE(proto, nullptr);
  EXPECT_EQ(proto->ret, RetType::kVoid);
  EXPECT_EQ(proto->args[0], ArgType::kPtrToCtx);
  EXPECT_EQ(proto->args[1], ArgType::kConstMapPtr);
  EXPECT_EQ(proto->args[2], ArgType::kAnything);
  EXPECT_FALSE(proto->gpl_only);
}

TEST(VerifierTailCall, AcceptedWithCtxAndAProgArray) {
  EXPECT_TRUE(accepted(verify_text(std::string(kTailCall) + "mov %r0, 0\nexit\n")));
  EXPECT_TRUE(accepted(verify_text(std::string(kTailCall) + "mov %r0, 0\nexit\n", false)));
  // Any index, a pointer too (privileged).
  EXPECT_TRUE(accepted(verify_text(
      "ldxdw %r3, [%r1+176]\nlddw %r2, map:progs\ncall tail_call\nmov %r0, 0\nexit\n")));
}

TEST(VerifierTailCall, RegistersAfterAFailedCall) {
  EXPECT_TRUE(rejected(verify_text(std::string(kTailCall) + "exit\n"), EACCES, "R0 !read_ok"));
  EXPECT_TRUE(rejected(verify_text(std::string(kTailCall) + "mov %r0, %r1\nexit\n"), EACCES,
                       "R1 !read_ok"));
  EXPECT_TRUE(accepted(
      verify_text("mov %r6, %r1\n" + std::string(kTailCall) + "ldxdw %r0, [%r6+168]\nexit\n")));
}

TEST(VerifierTailCall, ArgumentsAreChecked) {
  EXPECT_TRUE(rejected(verify_text("add %r1, 8\n" + std::string(kTailCall) + "mov %r0, 0\nexit\n"),
                       EACCES, "dereference of modified ctx ptr R1"));
  EXPECT_TRUE(rejected(verify_text("mov %r1, 0\n" + std::string(kTailCall) + "mov %r0, 0\nexit\n"),
                       EACCES, "R1 type=scalar expected=ctx"));
  EXPECT_TRUE(
      rejected(verify_text("lddw %r2, map:hash\nmov %r3, 0\ncall tail_call\nmov %r0, 0\nexit\n"),
               EINVAL, "cannot pass map_type 1 into func bpf_tail_call#12"));
  // A PROG_ARRAY goes to bpf_tail_call only.
  EXPECT_TRUE(rejected(verify_text("stw [%r10-4], 0\nmov %r2, %r10\nadd %r2, -4\n"
                                   "lddw %r1, map:progs\ncall map_lookup_elem\nmov %r0, 0\nexit\n"),
                       EINVAL, "cannot pass map_type 3 into func bpf_map_lookup_elem#1"));
}

std::string subprog_tail_call(int caller_stack, int callee_stack) {
  std::string text;
  if (caller_stack > 0) text += "stdw [%r10-" + std::to_string(caller_stack) + "], 0\n";
  text += "call local f\nmov %r0, 0\nexit\nf:\n";
  if (callee_stack > 0) text += "stdw [%r10-" + std::to_string(callee_stack) + "], 0\n";
  return text + kTailCall + "mov %r0, 0\nexit\n";
}

// As a clang -g object gives it: with BTF function info (no kernel comparison here: the kernel
// side of these tests loads without BTF; the corpus's C programs 325..327 compare it).
VerifyResult verify_with_btf(const std::string& text) {
  ProgramImage program;
  program.name = "test";
  program.section = "perf_event";
  program.prog_type = BPF_PROG_TYPE_PERF_EVENT;
  program.insns = assemble_or_fail(text);
  program.btf_func_info = true;
  VerifyOptions options;
  options.gpl_compatible = true;
  options.maps = &shared_maps();
  return verify(program, options);
}

TEST(VerifierTailCall, InSubprogramsOnlyWithBtf) {
  EXPECT_TRUE(rejected(verify_text(subprog_tail_call(0, 0)), EINVAL,
                       "tail_call is not allowed in subprogs without BTF"));
  // In the main program of a program with subprograms, no BTF is needed.
  EXPECT_TRUE(
      accepted(verify_text("mov %r6, %r1\ncall local f\nmov %r1, %r6\n" + std::string(kTailCall) +
                           "mov %r0, 0\nexit\nf:\nmov %r0, 0\nexit\n")));
  EXPECT_TRUE(accepted(verify_with_btf(subprog_tail_call(0, 0))));
}

TEST(VerifierTailCall, InSubprogramsUnderTheKernelsStackLimit) {
  EXPECT_TRUE(accepted(verify_with_btf(subprog_tail_call(240, 0))));
  EXPECT_TRUE(accepted(verify_with_btf(subprog_tail_call(64, 256))));
  EXPECT_TRUE(rejected(verify_with_btf(subprog_tail_call(256, 0)), EACCES,
                       "tail_calls are not allowed when call stack of previous frames is 256 "
                       "bytes. Too large"));
  EXPECT_TRUE(rejected(verify_with_btf(subprog_tail_call(248, 0)), EACCES,
                       "tail_calls are not allowed when call stack of previous frames is 256 "
                       "bytes. Too large"));
  // Without subprograms, nothing limits the main program's stack.
  EXPECT_TRUE(accepted(
      verify_text("stdw [%r10-512], 0\n" + std::string(kTailCall) + "mov %r0, 0\nexit\n")));
}

}  // namespace
}  // namespace userperf::bpf::verifier_test
