// Constant blinding: a program whose immediates are distinctive 32-bit patterns (an ALU K operand
// of each width, a multiplier, a divisor, a shift count's neighbour, a JMP and a JMP32 comparand,
// ST immediates of every size, both halves of an lddw) is compiled with and without blinding.
// Without, every pattern is in the machine code (so the scan can see them); with, none is: they are
// in the constant pool after the code, in pages that are readable and not executable, and the
// result is the interpreter's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "bpf/jit/jit.hpp"
#include "bpf/vm/interpreter.hpp"
#include "support/proc_lines.hpp"

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

// The permissions ("r-xp") of the mapping holding addr, from /proc/self/maps.
std::string permissions_at(const void* addr) {
  const auto a = reinterpret_cast<std::uintptr_t>(addr);
  std::string perms;
  support::for_each_proc_line("/proc/self/maps", [&](char* line, char*, bool) {
    char* rest = nullptr;
    const std::uintptr_t start = std::strtoull(line, &rest, 16);
    const std::uintptr_t end = std::strtoull(rest + 1, &rest, 16);
    if (a < start || a >= end) return false;
    perms.assign(rest + 1, 4);
    return true;
  });
  return perms;
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

    // They are in the pool, at the first page boundary after the code: readable, not executable.
    const std::span<const std::uint8_t> code = (*blinded)->code();
    const auto* pool = reinterpret_cast<const std::uint8_t*>(
        (reinterpret_cast<std::uintptr_t>(code.data()) + code.size() + 4095) / 4096 * 4096);
    EXPECT_EQ(permissions_at(code.data()), "r-xp");
    EXPECT_EQ(permissions_at(pool), "r--p");
    const std::span<const std::uint8_t> pool_page(pool, 4096);
    for (std::uint32_t v : kPatterns) {
      EXPECT_TRUE(contains(pool_page, v)) << std::hex << v << " checked " << checked;
    }
  }
}

}  // namespace
}  // namespace userperf::bpf
