// Global functions (BTF_FUNC_GLOBAL): verified once on their own from their BTF prototype, their
// calls checked against it, r0 unknown after the call. The programs carry hand-made BTF function
// info (the kernel, which would need the object's BTF, is asked through the C corpus programs
// 384-390 and 420-429); the messages are the ones Linux 6.18 logs for those.
#include <linux/bpf.h>

#include <string>
#include <utility>
#include <vector>

#include "verifier_test_support.hpp"

namespace userperf::bpf::verifier_test {
namespace {

using Kind = BtfFuncArg::Kind;

BtfFuncArg arg(Kind kind, std::uint32_t mem_size = 0) {
  BtfFuncArg a;
  a.kind = kind;
  a.mem_size = mem_size;
  return a;
}

// `text`'s main function and one function `f` (label f:) whose prototype is `args`.
struct GlobalProgram {
  std::string text;
  std::vector<BtfFuncArg> args;
  bool global = true;
  bool returns_scalar = true;
  std::uint32_t log_level = 1;
};

VerifyResult verify_global(const GlobalProgram& p) {
  ProgramImage program;
  program.name = "test";
  program.section = "perf_event";
  program.prog_type = BPF_PROG_TYPE_PERF_EVENT;
  program.insns = assemble_or_fail(p.text);
  program.btf_func_info = true;
  // f is the function after the main one's exit: the target of its first local call or lddw.
  std::uint32_t start = 0;
  for (std::size_t i = 0; i < program.insns.size(); ++i) {
    const Insn& in = program.insns[i];
    if ((in.code == (BPF_JMP | BPF_CALL) && in.src_reg == BPF_PSEUDO_CALL) ||
        (in.code == (BPF_LD | BPF_IMM | BPF_DW) && in.src_reg == BPF_PSEUDO_FUNC)) {
      start = static_cast<std::uint32_t>(static_cast<std::int64_t>(i) + in.imm + 1);
      break;
    }
  }
  EXPECT_NE(start, 0u) << p.text;
  program.btf_funcs.push_back({0, "test", true, true, {arg(Kind::kCtx)}});
  program.btf_funcs.push_back({start, "f", p.global, p.returns_scalar, p.args});
  VerifyOptions options;
  options.gpl_compatible = true;
  options.maps = &shared_maps();
  options.log_level = p.log_level;
  return verify(program, options);
}

// twice(u64 *p) called with fp-8; `body` is twice's code.
GlobalProgram mem_arg_program(const std::string& body) {
  return {
      "ldxdw %r1, [%r1+168]\n"
      "stxdw [%r10-8], %r1\n"
      "mov %r1, %r10\n"
      "add %r1, -8\n"
      "call local f\n"
      "mov %r0, 0\n"
      "exit\n"
      "f:\n" +
          body,
      {arg(Kind::kMem, 8)}};
}

const std::string kTwiceChecked =
    "mov %r0, 0\n"
    "jeq %r1, 0, +4\n"
    "ldxdw %r2, [%r1+0]\n"
    "lsh %r2, 1\n"
    "stxdw [%r1+0], %r2\n"
    "mov %r0, 1\n"
    "exit\n";

TEST(VerifierGlobalFuncs, VerifiedOnceOnItsOwn) {
  GlobalProgram p = mem_arg_program(kTwiceChecked);
  p.log_level = 2;
  const VerifyResult r = verify_global(p);
  ASSERT_TRUE(accepted(r));
  const auto called = r.log.find("Func#1 ('f') is global and assumed valid.");
  const auto validating = r.log.find("Validating f() func#1...\n7: R1=mem_or_null(id=");
  const auto safe = r.log.find("Func#1 ('f') is safe for any args that match its prototype");
  ASSERT_NE(called, std::string::npos) << r.log;
  ASSERT_NE(validating, std::string::npos) << r.log;
  ASSERT_NE(safe, std::string::npos) << r.log;
  EXPECT_LT(called, validating);
  EXPECT_LT(validating, safe);
}

TEST(VerifierGlobalFuncs, AMemoryArgumentMayBeNull) {
  const VerifyResult r =
      verify_global(mem_arg_program("ldxdw %r2, [%r1+0]\n"
                                    "lsh %r2, 1\n"
                                    "stxdw [%r1+0], %r2\n"
                                    "mov %r0, 1\n"
                                    "exit\n"));
  EXPECT_TRUE(rejected(r, EACCES, "R1 invalid mem access 'mem_or_null'"));
  // Level 1: the failing path starts at the global function, in the state its prototype gives.
  EXPECT_NE(r.log.find("Validating f() func#1...\n7: R1=mem_or_null(id=1,sz=8) R10=fp0\n"
                       "7: (79) r2 = *(u64 *)(r1 +0)\n"),
            std::string::npos)
      << r.log;
}

TEST(VerifierGlobalFuncs, AStaticFunctionIsStillEnteredWithTheCallersArguments) {
  GlobalProgram p = mem_arg_program(
      "ldxdw %r2, [%r1+0]\n"
      "mov %r0, 1\n"
      "exit\n");
  p.global = false;
  EXPECT_TRUE(accepted(verify_global(p)));
}

TEST(VerifierGlobalFuncs, TheMemoryIsBoundedByThePointeeSize) {
  GlobalProgram p = mem_arg_program(
      "mov %r0, 0\n"
      "jeq %r1, 0, +1\n"
      "ldxdw %r0, [%r1+8]\n"
      "exit\n");
  p.args = {arg(Kind::kMem, 16)};
  // The caller's 8 bytes of stack are too few for a 16-byte pointee.
  EXPECT_TRUE(rejected(verify_global(p), EINVAL,
                       "invalid read from stack R1 off=-8 size=16\n"
                       "Caller passes invalid args into func#1 ('f')"));
  p.args = {arg(Kind::kMem, 8)};
  EXPECT_TRUE(
      rejected(verify_global(p), EACCES, "invalid access to memory, mem_size=8 off=8 size=8"));
}

TEST(VerifierGlobalFuncs, AScalarIsNoMemoryArgumentButNullIs) {
  const std::string body = kTwiceChecked;
  GlobalProgram p{
      "ldxdw %r1, [%r1+168]\n"
      "or %r1, 1\n"
      "call local f\n"
      "exit\n"
      "f:\n" +
          body,
      {arg(Kind::kMem, 8)}};
  EXPECT_TRUE(rejected(verify_global(p), EINVAL,
                       "R1 type=scalar expected=fp\nCaller passes invalid args into func#1 ('f')"));
  p.text = "mov %r1, 0\ncall local f\nexit\nf:\n" + body;
  EXPECT_TRUE(accepted(verify_global(p)));
}

TEST(VerifierGlobalFuncs, TheCallerSeesAnUnknownScalar) {
  // f returns 0, but the caller's r0 is unknown: fp + r0 is an unbounded stack access.
  GlobalProgram p{
      "stdw [%r10-8], 0\n"
      "mov %r1, 1\n"
      "call local f\n"
      "mov %r1, %r10\n"
      "add %r1, %r0\n"
      "ldxb %r0, [%r1-8]\n"
      "exit\n"
      "f:\n"
      "mov %r0, 0\n"
      "exit\n",
      {arg(Kind::kScalar)}};
  EXPECT_TRUE(rejected(verify_global(p), EINVAL,
                       "4: R0=scalar() R1=fp0 R10=fp0 fp-8=0\n"
                       "math between fp pointer and register with unbounded min value is not "
                       "allowed"));
  p.global = false;
  EXPECT_TRUE(accepted(verify_global(p)));
}

TEST(VerifierGlobalFuncs, StackItWasGivenBecomesUnknown) {
  // fp-8 holds 0 before the call; the global function may write it.
  GlobalProgram p{
      "stdw [%r10-8], 0\n"
      "mov %r1, %r10\n"
      "add %r1, -8\n"
      "call local f\n"
      "ldxdw %r2, [%r10-8]\n"
      "mov %r1, %r10\n"
      "add %r1, %r2\n"
      "ldxb %r0, [%r1-8]\n"
      "exit\n"
      "f:\n"
      "mov %r0, 0\n"
      "exit\n",
      {arg(Kind::kMem, 8)}};
  const VerifyResult global = verify_global(p);
  EXPECT_FALSE(global.accepted) << global.log;
  p.global = false;
  EXPECT_TRUE(accepted(verify_global(p)));
}

TEST(VerifierGlobalFuncs, ArgumentsMustMatchThePrototype) {
  GlobalProgram p{"mov %r1, %r10\ncall local f\nexit\nf:\nmov %r0, 0\nexit\n",
                  {arg(Kind::kScalar)}};
  EXPECT_TRUE(rejected(verify_global(p), EINVAL,
                       "R1 is not a scalar\nCaller passes invalid args into func#1 ('f')"));
  p.args = {arg(Kind::kCtx)};
  EXPECT_TRUE(
      rejected(verify_global(p), EINVAL,
               "arg#0 expects pointer to ctx\nCaller passes invalid args into func#1 ('f')"));
  p.text = "add %r1, 8\ncall local f\nexit\nf:\nmov %r0, 0\nexit\n";
  EXPECT_TRUE(rejected(verify_global(p), EACCES,
                       "dereference of modified ctx ptr R1 off=8 disallowed\n"
                       "Caller passes invalid args into func#1 ('f')"));
  p.text = "call local f\nexit\nf:\nldxdw %r0, [%r1+168]\nexit\n";
  EXPECT_TRUE(accepted(verify_global(p)));
}

TEST(VerifierGlobalFuncs, PrototypesTheKernelRefuses) {
  GlobalProgram p{"mov %r1, 0\ncall local f\nexit\nf:\nmov %r0, 0\nexit\n", {arg(Kind::kScalar)}};
  p.returns_scalar = false;
  EXPECT_TRUE(rejected(verify_global(p), EINVAL,
                       "Global function f() doesn't return scalar. Only those are supported.\n"
                       "Caller passes invalid args into func#1 ('f')"));
  p.returns_scalar = true;
  BtfFuncArg unsized = arg(Kind::kUnsized);
  unsized.btf_kind = "UNKNOWN";
  unsized.size_error = -EINVAL;
  p.args = {unsized};
  EXPECT_TRUE(rejected(verify_global(p), EINVAL,
                       "arg#0 reference type('UNKNOWN ') size cannot be determined: -22\n"
                       "Caller passes invalid args into func#1 ('f')"));
  BtfFuncArg by_value = arg(Kind::kUnsupported);
  by_value.btf_kind = "STRUCT";
  p.args = {by_value};
  EXPECT_TRUE(rejected(verify_global(p), EINVAL, "Arg#0 type STRUCT in f() is not supported yet."));
  p.args = std::vector<BtfFuncArg>(6, arg(Kind::kScalar));
  EXPECT_TRUE(
      rejected(verify_global(p), EINVAL, "Global function f() with 6 > 5 args. Buggy compiler."));
}

TEST(VerifierGlobalFuncs, ItMustReturnAScalar) {
  GlobalProgram p{"call local f\nexit\nf:\nmov %r0, %r1\nexit\n", {arg(Kind::kCtx)}};
  EXPECT_TRUE(rejected(verify_global(p), EINVAL,
                       "At subprogram exit the register R0 is not a scalar value (ctx)"));
  p.text = "call local f\nexit\nf:\nexit\n";
  EXPECT_TRUE(rejected(verify_global(p), EACCES, "R0 !read_ok"));
}

TEST(VerifierGlobalFuncs, OnlyCalledFunctionsAreVerified) {
  // The call is on a branch the walk never takes: f, which would fail, is never verified.
  GlobalProgram p{
      "mov %r0, 0\n"
      "jeq %r0, 0, +1\n"
      "call local f\n"
      "exit\n"
      "f:\n"
      "mov %r0, %r1\n"
      "exit\n",
      {arg(Kind::kCtx)}};
  const VerifyResult r = verify_global(p);
  EXPECT_TRUE(accepted(r));
}

TEST(VerifierGlobalFuncs, ACallbackMustBeStatic) {
  const std::string text =
      "stdw [%r10-8], 0\n"
      "mov %r1, 2\n"
      "lddw %r2, 0\n"
      "mov %r3, %r10\n"
      "add %r3, -8\n"
      "mov %r4, 0\n"
      "call bpf_loop\n"
      "exit\n"
      "mov %r0, 0\n"
      "exit\n";
  std::vector<Insn> insns = assemble_or_fail(text);
  ASSERT_EQ(insns[2].code, BPF_LD | BPF_IMM | BPF_DW);
  insns[2].src_reg = BPF_PSEUDO_FUNC;
  insns[2].imm = 9 - 2 - 1;
  for (bool global : {true, false}) {
    ProgramImage program;
    program.prog_type = BPF_PROG_TYPE_PERF_EVENT;
    program.insns = insns;
    program.btf_func_info = true;
    program.btf_funcs.push_back({9, "cb", global, true, {arg(Kind::kScalar), arg(Kind::kMem, 8)}});
    VerifyOptions options;
    options.gpl_compatible = true;
    options.maps = &shared_maps();
    const VerifyResult r = verify(program, options);
    if (global) {
      EXPECT_TRUE(rejected(r, EINVAL, "callback function not static"));
    } else {
      EXPECT_TRUE(accepted(r));
    }
  }
}

TEST(VerifierGlobalFuncs, WithoutBtfEveryFunctionIsStatic) {
  // The same prototype list, but no BTF function info: the call is entered with the caller's
  // fp-8, which is not NULL.
  GlobalProgram p = mem_arg_program(
      "ldxdw %r2, [%r1+0]\n"
      "mov %r0, 1\n"
      "exit\n");
  ProgramImage program;
  program.prog_type = BPF_PROG_TYPE_PERF_EVENT;
  program.insns = assemble_or_fail(p.text);
  program.btf_funcs.push_back({7, "f", true, true, p.args});
  VerifyOptions options;
  options.gpl_compatible = true;
  options.maps = &shared_maps();
  EXPECT_TRUE(accepted(verify(program, options)));
}

}  // namespace
}  // namespace userperf::bpf::verifier_test
