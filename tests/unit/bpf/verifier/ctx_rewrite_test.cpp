// Ctx rewriting: verified loads from struct bpf_perf_event_data become loads from userperf's
// internal context, and jumps and local calls around them still land where they did.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "bpf/verifier/ctx_rewrite.hpp"
#include "bpf/verifier/insn_patcher.hpp"
#include "bpf/vm/interpreter.hpp"
#include "verifier_test_support.hpp"

namespace userperf::bpf::verifier_test {
namespace {

// A hand-made internal context: what the runtime passes instead of the uapi struct.
struct TestSample {
  std::uint64_t unrelated = 0xdead;
  std::uint64_t addr = 0;
  std::uint64_t period = 0;
};
struct TestRegs {
  std::uint64_t slots[4] = {};  // only some pt_regs fields exist here
};
struct TestCtx {
  std::uint64_t pad = 0;
  TestRegs* regs = nullptr;
  TestSample* sample = nullptr;
};

PerfEventCtxLayout test_layout() {
  PerfEventCtxLayout layout;
  layout.sample_ptr = offsetof(TestCtx, sample);
  layout.regs_ptr = offsetof(TestCtx, regs);
  layout.period = offsetof(TestSample, period);
  layout.addr = offsetof(TestSample, addr);
  for (auto& slot : layout.regs) slot = -1;
  layout.regs[16] = 8 * 2;  // pt_regs.ip (offset 128) -> slots[2]
  layout.regs[19] = 8 * 3;  // pt_regs.sp (offset 152) -> slots[3]
  return layout;
}

std::uint64_t run(const std::vector<Insn>& insns, TestCtx& ctx) {
  auto vm = Interpreter::load(insns, InterpreterOptions{});
  EXPECT_TRUE(vm.ok()) << (vm.ok() ? "" : vm.error().message);
  if (!vm.ok()) return ~0ULL;
  auto region = [](const void* p, std::size_t n) {
    const auto begin = reinterpret_cast<std::uintptr_t>(p);
    return MemoryRegion{begin, begin + n, false};
  };
  const MemoryRegion regions[] = {region(&ctx, sizeof ctx), region(ctx.regs, sizeof(TestRegs)),
                                  region(ctx.sample, sizeof(TestSample))};
  const RunResult result = (*vm)->run(reinterpret_cast<std::uintptr_t>(&ctx), 0, regions, nullptr);
  EXPECT_EQ(result.status, RunStatus::kOk) << to_string(result.status) << " at " << result.pc;
  return result.r0;
}

TEST(VerifierCtxRewrite, LoadsReadTheInternalFields) {
  const PerfEventCtxLayout layout = test_layout();
  // r0 = period + (addr & 0xffff via a u16 load of its low bytes) + ip + high u32 of period
  //      + a register userperf lacks (reads 0)
  const Outcome r = verify_insns(assemble_or_fail(R"(
    ldxdw %r0, [%r1+168]
    ldxh %r2, [%r1+176]
    add %r0, %r2
    ldxdw %r2, [%r1+128]
    add %r0, %r2
    ldxw %r2, [%r1+172]
    add %r0, %r2
    ldxdw %r2, [%r1+0]
    add %r0, %r2
    exit
  )"),
                                 true, &layout);
  ASSERT_TRUE(accepted(r));
  // Every ctx load became two loads, or one mov for the missing register.
  EXPECT_EQ(r.insns.size(), 10u + 4u);
  TestSample sample;
  sample.period = 0x0000000700001000;
  sample.addr = 0x123456789abc;
  TestRegs regs;
  regs.slots[2] = 0x400000;
  regs.slots[0] = 0xbad;  // pt_regs.r15 is mapped to nothing: never read
  TestCtx ctx;
  ctx.sample = &sample;
  ctx.regs = &regs;
  EXPECT_EQ(run(r.insns, ctx), 0x0000000700001000ULL + 0x9abc + 0x400000 + 7);
}

TEST(VerifierCtxRewrite, JumpsAndCallsAroundRewrittenLoadsStillLand) {
  const PerfEventCtxLayout layout = test_layout();
  const Outcome r = verify_insns(assemble_or_fail(R"(
    mov %r6, %r1
    ldxdw %r7, [%r6+168]
    jgt %r7, 100, big
    ldxdw %r0, [%r6+152]
    ja done
  big:
    mov %r1, %r6
    call local addr_of
  done:
    exit
  addr_of:
    ldxdw %r0, [%r1+176]
    add %r0, 1
    exit
  )"),
                                 true, &layout);
  ASSERT_TRUE(accepted(r));
  TestSample sample;
  sample.addr = 41;
  TestRegs regs;
  regs.slots[3] = 5;
  TestCtx ctx;
  ctx.sample = &sample;
  ctx.regs = &regs;
  sample.period = 10;
  EXPECT_EQ(run(r.insns, ctx), 5u);  // small period: sp
  sample.period = 1000;
  EXPECT_EQ(run(r.insns, ctx), 42u);  // big period: addr + 1 in the subprogram
}

TEST(VerifierCtxRewrite, FunctionStartsMoveWithTheirInstructions) {
  const PerfEventCtxLayout layout = test_layout();
  const Outcome r = verify_insns(assemble_or_fail(R"(
    ldxdw %r0, [%r1+168]
    stdw [%r10-8], 0
    call local f
    exit
  f:
    stdw [%r10-16], 0
    ldxdw %r0, [%r1+176]
    exit
  )"),
                                 true, &layout);
  ASSERT_TRUE(accepted(r));
  ASSERT_EQ(r.function_stacks.size(), 2u);
  EXPECT_EQ(r.function_stacks[0].depth, 8u);
  EXPECT_EQ(r.function_stacks[1].start, 5u);  // was 4: the ctx load before it became two
  EXPECT_EQ(r.function_stacks[1].depth, 16u);
  EXPECT_EQ(r.insns[5].code, BPF_ST | BPF_MEM | BPF_DW);
}

TEST(VerifierCtxRewrite, WithoutLayoutTheProgramIsUnchanged) {
  const std::vector<Insn> insns = assemble_or_fail("ldxdw %r0, [%r1+168]\nexit\n");
  const Outcome r = verify_insns(insns);
  ASSERT_TRUE(accepted(r));
  ASSERT_EQ(r.insns.size(), insns.size());
  for (std::size_t i = 0; i < insns.size(); ++i) {
    EXPECT_EQ(std::memcmp(&r.insns[i], &insns[i], sizeof(Insn)), 0) << i;
  }
}

TEST(VerifierCtxRewrite, ConvertedInstructions) {
  const PerfEventCtxLayout layout = test_layout();
  const Insn narrow = make_insn(BPF_LDX | BPF_MEM | BPF_B, 3, 1, 179, 0);  // addr byte 3
  const std::vector<Insn> out = convert_ctx_load(narrow, layout);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].code, BPF_LDX | BPF_MEM | BPF_DW);
  EXPECT_EQ(out[0].dst_reg, 3);
  EXPECT_EQ(out[0].src_reg, 1);
  EXPECT_EQ(out[0].off, layout.sample_ptr);
  EXPECT_EQ(out[1].code, BPF_LDX | BPF_MEM | BPF_B);
  EXPECT_EQ(out[1].src_reg, 3);
  EXPECT_EQ(out[1].off, layout.addr + 3);
  const std::vector<Insn> missing =
      convert_ctx_load(make_insn(BPF_LDX | BPF_MEM | BPF_DW, 2, 1, 8, 0), layout);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].code, BPF_ALU64 | BPF_MOV | BPF_K);
  EXPECT_EQ(missing[0].imm, 0);
}

TEST(VerifierCtxRewrite, PatcherRefusesJumpsThatNoLongerFit) {
  // A jump of 32767 over an instruction that grows by one no longer fits in 16 bits.
  std::vector<Insn> insns;
  insns.push_back(make_insn(BPF_JMP | BPF_JA, 0, 0, 32767, 0));
  for (int i = 0; i < 32767; ++i)
    insns.push_back(make_insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0));
  insns.push_back(make_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
  InsnPatcher patcher(insns);
  patcher.replace(5, {make_insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1),
                      make_insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 2)});
  auto out = patcher.apply();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ERANGE);
  InsnPatcher small(insns);
  small.replace(5, {make_insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1)});
  ASSERT_TRUE(small.apply().ok());
}

}  // namespace
}  // namespace userperf::bpf::verifier_test
