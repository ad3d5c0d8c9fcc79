// bpf_loop callbacks: the function lddw needs BTF function info, the helper's argument types, the
// callback's return range, and the iterations of a callback whose count is unknown converging.
// The kernel is asked where it can be (without BTF); the rest follows its messages
// (prepare_func_exit, check_func_arg).
#include <linux/bpf.h>

#include <string>

#include "bpf/verifier/helper_protos.hpp"
#include "verifier_test_support.hpp"

namespace userperf::bpf::verifier_test {
namespace {

constexpr std::size_t kFuncLddw = 2;
constexpr std::size_t kCallback = 10;

// bpf_loop(nr_loops, callback, fp-8 or `ctx`, 0) with `callback` as the callback's body.
std::vector<Insn> loop_program(const std::string& nr_loops, const std::string& callback,
                               const std::string& ctx = "mov %r3, %r10\nadd %r3, -8\n") {
  const std::string text = "stdw [%r10-8], 0\n" + nr_loops + "lddw %r2, 0\n" + ctx +
                           "mov %r4, 0\n"
                           "call bpf_loop\n"
                           "mov %r0, 0\n"
                           "exit\n" +
                           callback;
  std::vector<Insn> insns = assemble_or_fail(text);
  EXPECT_EQ(insns[kFuncLddw].code, BPF_LD | BPF_IMM | BPF_DW) << text;
  insns[kFuncLddw].src_reg = BPF_PSEUDO_FUNC;
  insns[kFuncLddw].imm = static_cast<std::int32_t>(kCallback - kFuncLddw - 1);
  return insns;
}

const std::string kCount4 = "mov %r1, 4\n";
const std::string kAddIndex =
    "ldxdw %r3, [%r2+0]\n"
    "add %r3, %r1\n"
    "stxdw [%r2+0], %r3\n"
    "mov %r0, 0\n"
    "exit\n";

// userperf's verdict with BTF function info (which the kernel would need the object's BTF for).
VerifyResult verify_with_btf(std::vector<Insn> insns) {
  ProgramImage program;
  program.name = "test";
  program.section = "perf_event";
  program.prog_type = BPF_PROG_TYPE_PERF_EVENT;
  program.insns = std::move(insns);
  program.btf_func_info = true;
  VerifyOptions options;
  options.gpl_compatible = true;
  options.maps = &shared_maps();
  return verify(program, options);
}

TEST(VerifierCallbacks, Prototype) {
  const HelperProto* proto = perf_event_helper_proto(BPF_FUNC_loop);
  ASSERT_NE(proto, nullptr);
  EXPECT_EQ(proto->ret, RetType::kInteger);
  EXPECT_EQ(proto->args[0], ArgType::kAnything);
  EXPECT_EQ(proto->args[1], ArgType::kPtrToFunc);
  EXPECT_EQ(proto->args[2], ArgType::kPtrToStackOrNull);
  EXPECT_EQ(proto->args[3], ArgType::kAnything);
  EXPECT_FALSE(proto->gpl_only);
}

TEST(VerifierCallbacks, AFunctionAddressNeedsBtfFunctionInfo) {
  const Outcome r = verify_insns(loop_program(kCount4, kAddIndex));
  EXPECT_TRUE(rejected(r, EINVAL, "missing btf func_info"));
  EXPECT_TRUE(kernel_agrees(r));
}

TEST(VerifierCallbacks, AcceptedWithAStackContext) {
  const VerifyResult r = verify_with_btf(loop_program(kCount4, kAddIndex));
  EXPECT_TRUE(accepted(r));
}

TEST(VerifierCallbacks, TheCallbackMustReturnZeroOrOne) {
  EXPECT_TRUE(rejected(verify_with_btf(loop_program(kCount4, "mov %r0, 2\nexit\n")), EINVAL,
                       "At callback return the register R0 has smin=2 smax=2 should have been in "
                       "[0, 1]"));
  EXPECT_TRUE(rejected(verify_with_btf(loop_program(kCount4, "mov %r0, %r1\nexit\n")), EINVAL,
                       "has unknown scalar value should have been in [0, 1]"));
  EXPECT_TRUE(rejected(verify_with_btf(loop_program(kCount4, "lddw %r0, map:hash\nexit\n")), EACCES,
                       "R0 not a scalar value"));
  EXPECT_TRUE(accepted(
      verify_with_btf(loop_program(kCount4, "mov %r0, %r1\nand %r0, 1\nexit\n"))));  // 0 or 1
}

TEST(VerifierCallbacks, ArgumentTypes) {
  // The context setup is two instructions in each (the callback's index is fixed).
  EXPECT_TRUE(
      rejected(verify_with_btf(loop_program(kCount4, kAddIndex, "mov %r3, %r10\nmov %r2, 5\n")),
               EACCES, "R2 type=scalar expected=func"));
  EXPECT_TRUE(rejected(verify_with_btf(loop_program(kCount4, kAddIndex, "lddw %r3, map:hash\n")),
                       EACCES, "R3 type=map_ptr expected=fp"));
  // NULL is a context too; the callback must not touch it then.
  EXPECT_TRUE(accepted(
      verify_with_btf(loop_program(kCount4, "mov %r0, 0\nexit\n", "mov %r3, 0\nmov %r5, 0\n"))));
  EXPECT_TRUE(
      rejected(verify_with_btf(loop_program(kCount4, kAddIndex, "mov %r3, 0\nmov %r5, 0\n")),
               EACCES, "invalid mem access 'scalar'"));
}

TEST(VerifierCallbacks, TheCallbackSeesItsCallersStackThroughTheContext) {
  // 8 bytes past the caller's u64 at fp-8 is fp+0: outside the caller's frame.
  EXPECT_TRUE(
      rejected(verify_with_btf(loop_program(kCount4, "stdw [%r2+8], 1\nmov %r0, 0\nexit\n")),
               EACCES, "invalid write to stack"));
}

TEST(VerifierCallbacks, AnUnknownCountConvergesByWidening) {
  // The counter at fp-8 is 0, 1, 2, ... on successive iterations: never the same state, so the
  // walk ends only because the changed, imprecise counter is widened to unknown; nr_loops may be
  // anything up to 2^64 - 1.
  const VerifyResult r = verify_with_btf(
      loop_program("ldxdw %r1, [%r1+168]\n",
                   "ldxdw %r3, [%r2+0]\nadd %r3, 1\nstxdw [%r2+0], %r3\nmov %r0, 0\nexit\n"));
  EXPECT_TRUE(accepted(r));
  EXPECT_LT(r.processed_insns, 200u);
}

}  // namespace
}  // namespace userperf::bpf::verifier_test
