// Constant blinding: a program whose immediates are distinctive 32-bit patterns (an ALU K operand
// of each width, a multiplier, a divisor, a shift count's neighbour, a JMP and a JMP32 comparand,
// ST immediates of every size, both halves of an lddw) is compiled with and without blinding.
// Without, every pattern is in the machine code (so the scan can see them); with, none is, two
// compilations differ (a fresh random key per program), and the result is the interpreter's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "bpf/jit/jit.hpp"
#include "bpf/vm/interpreter.hpp"

namespace userperf::bpf {
namespace {

constexpr std::uint32_t kPatterns[] = {
    0x5ec2e7a1u,  // mov64 K
    0x1badb002u,  // add64 K
    0x2c0ffee5u,  // mov32 K
    0x31415926u,  // xor32 K
    0x0dec0dedu,  // mul64 K
    0x00c0ffeeu,  // div64 K
    0x7e57ab1eu,  // jeq K
    0x4ee7c0deu,  // jne32 K
    0x6a09e667u,  // stdw
    0x3c6ef372u,  // stw
    0x9b05688cu,  // lddw, low half
    0x510e527fu,  // lddw, high half
};

std::vector<Insn> distinctive_program() {
  const auto k = [](std::uint32_t v) { return static_cast<std::int32_t>(v); };
  std::vector<Insn> p = {
      make_insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, k(kPatterns[0])),
      make_insn(BPF_ALU64 | BPF_ADD | BPF_K, 0, 0, 0, k(kPatterns[1])),
      make_insn(BPF_ALU | BPF_MOV | BPF_K, 1, 0, 0, k(kPatterns[2])),
      make_insn(BPF_ALU | BPF_XOR | BPF_K, 1, 0, 0, k(kPatterns[3])),
      make_insn(BPF_ALU64 | BPF_MUL | BPF_K, 0, 0, 0, k(kPatterns[4])),
      make_insn(BPF_ALU64 | BPF_DIV | BPF_K, 0, 0, 0, k(kPatterns[5])),
      make_insn(BPF_ALU64 | BPF_LSH | BPF_K, 1, 0, 0, 13),
      make_insn(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1, k(kPatterns[6])),
      make_insn(BPF_ALU64 | BPF_ADD | BPF_X, 0, 1, 0, 0),
      make_insn(BPF_JMP32 | BPF_JNE | BPF_K, 1, 0, 1, k(kPatterns[7])),
      make_insn(BPF_ALU64 | BPF_ADD | BPF_K, 0, 0, 0, 1),
      make_insn(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, k(kPatterns[8])),
      make_insn(BPF_ST | BPF_MEM | BPF_W, 10, 0, -16, k(kPatterns[9])),
      make_insn(BPF_ST | BPF_MEM | BPF_H, 10, 0, -20, 0x1234),
      make_insn(BPF_ST | BPF_MEM | BPF_B, 10, 0, -22, 0x56),
      make_insn(BPF_LD | BPF_IMM | BPF_DW, 2, 0, 0, k(kPatterns[10])),
      make_insn(0, 0, 0, 0, k(kPatterns[11])),
      make_insn(BPF_LDX | BPF_MEM | BPF_DW, 3, 10, -8, 0),
      make_insn(BPF_ALU64 | BPF_ADD | BPF_X, 0, 3, 0, 0),
      make_insn(BPF_LDX | BPF_MEM | BPF_W, 3, 10, -16, 0),
      make_insn(BPF_ALU64 | BPF_XOR | BPF_X, 0, 3, 0, 0),
      make_insn(BPF_LDX | BPF_MEM | BPF_H, 3, 10, -20, 0),
      make_insn(BPF_ALU64 | BPF_ADD | BPF_X, 0, 3, 0, 0),
      make_insn(BPF_LDX | BPF_MEM | BPF_B, 3, 10, -22, 0),
      make_insn(BPF_ALU64 | BPF_SUB | BPF_X, 0, 3, 0, 0),
      make_insn(BPF_ALU64 | BPF_ADD | BPF_X, 0, 2, 0, 0),
      make_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
  };
  return p;
}

bool contains(std::span<const std::uint8_t> code, std::uint32_t v) {
  std::uint8_t le[4];
  for (int i = 0; i < 4; ++i) le[i] = static_cast<std::uint8_t>(v >> (8 * i));
  return std::search(code.begin(), code.end(), le, le + 4) != code.end();
}

TEST(JitBlinding, NoProgramConstantInBlindedCode) {
  if (!jit_supported()) GTEST_SKIP() << "no JIT on this architecture";
  const std::vector<Insn> insns = distinctive_program();
  auto vm = Interpreter::load(insns, {});
  ASSERT_TRUE(vm) << vm.error().message;
  const std::uint64_t want = (*vm)->run(0, 0, {}, nullptr).r0;

  for (bool checked : {false, true}) {
    auto plain = Jit::load(insns, {.checked = checked});
    ASSERT_TRUE(plain) << plain.error().message;
    EXPECT_EQ((*plain)->run(0, 0, {}, nullptr).r0, want);
    // The scan finds each constant when it is there: without blinding, all of them.
    for (std::uint32_t v : kPatterns) {
      EXPECT_TRUE(contains((*plain)->code(), v)) << std::hex << v << " checked " << checked;
    }

    auto blinded = Jit::load(insns, {.checked = checked, .blind_constants = true});
    ASSERT_TRUE(blinded) << blinded.error().message;
    const RunResult got = (*blinded)->run(0, 0, {}, nullptr);
    EXPECT_EQ(got.status, RunStatus::kOk);
    EXPECT_EQ(got.r0, want);
    for (std::uint32_t v : kPatterns) {
      EXPECT_FALSE(contains((*blinded)->code(), v)) << std::hex << v << " checked " << checked;
    }

    // A new key per program: the same program compiles to different bytes.
    auto again = Jit::load(insns, {.checked = checked, .blind_constants = true});
    ASSERT_TRUE(again);
    EXPECT_EQ((*again)->run(0, 0, {}, nullptr).r0, want);
    const auto a = (*blinded)->code();
    const auto b = (*again)->code();
    EXPECT_FALSE(a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin()));
  }
}

}  // namespace
}  // namespace userperf::bpf
