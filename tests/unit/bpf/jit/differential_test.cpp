// The JIT against the interpreter on generated programs: random ALU (all ops, both widths, K and
// X, div/mod by 0 and -1, shifts by any count, movsx, byte swaps), lddw, loads and stores of every
// size and atomics on the stack and a buffer, forward jumps of every condition (JMP and JMP32),
// bounded back loops (1..8 rounds), local calls of subprograms (their own frame; r6..r9 restored)
// and helper calls. Every access is in bounds by construction, so the programs also run as
// unchecked code (what verified programs get). Compared: r0, r0..r8 and the whole stack (stored
// into the buffer by an epilogue) and every byte of the buffer; each on the JIT checked and
// unchecked, with and without constant blinding.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "bpf/isa/opcode_facts.hpp"
#include "bpf/jit/jit.hpp"
#include "bpf/vm/interpreter.hpp"

namespace userperf::bpf {
namespace {

constexpr int kPrograms = 100'000;
constexpr int kData = 256;                 // random accesses through r9
constexpr int kRegsAt = kData;             // r0..r8 stored here
constexpr int kStackAt = kRegsAt + 9 * 8;  // then the stack
constexpr int kBufferSize = kStackAt + kMaxStack;

std::uint64_t mix_helper(std::uint64_t r1, std::uint64_t r2, std::uint64_t r3, std::uint64_t r4,
                         std::uint64_t r5, CallContext&) {
  return (r1 * 0x9e3779b97f4a7c15ull) ^ (r2 << 7) ^ (r3 >> 3) ^ (r4 + r5);
}

struct Unit {
  std::vector<Insn> insns;
  int jump_to_unit = -1;  // a forward jump: resolved when laid out
  int call_sub = -1;      // a local call of subprogram call_sub: resolved when laid out
};

class Generator {
 public:
  explicit Generator(std::uint32_t seed) : rng_(seed) {}

  std::vector<Insn> program() {
    subs_.clear();
    std::vector<Unit> body;
    const int n = pick(1, 40);
    for (int i = 0; i < n; ++i) body.push_back(unit(i, n));
    std::vector<Insn> out;
    out.push_back(make_insn(BPF_ALU64 | BPF_MOV | BPF_X, 9, 1, 0, 0));
    for (int k = 1; k <= kMaxStack / 8; ++k)
      out.push_back(
          make_insn(BPF_ST | BPF_MEM | BPF_DW, 10, 0, static_cast<std::int16_t>(-8 * k), 0));
    for (int r = 0; r <= 8; ++r)
      if (r != 1) out.push_back(make_insn(BPF_ALU64 | BPF_MOV | BPF_K, r, 0, 0, value32()));
    std::vector<std::size_t> start;
    for (const Unit& u : body) {
      start.push_back(out.size());
      out.insert(out.end(), u.insns.begin(), u.insns.end());
    }
    const std::size_t epilogue = out.size();
    for (std::size_t u = 0; u < body.size(); ++u) {
      if (body[u].jump_to_unit < 0) continue;
      const std::size_t target = static_cast<std::size_t>(body[u].jump_to_unit) < body.size()
                                     ? start[static_cast<std::size_t>(body[u].jump_to_unit)]
                                     : epilogue;
      Insn& j = out[start[u]];
      j.off = static_cast<std::int16_t>(target - start[u] - 1);
    }
    for (int r = 0; r <= 8; ++r)
      out.push_back(make_insn(BPF_STX | BPF_MEM | BPF_DW, 9, r,
                              static_cast<std::int16_t>(kRegsAt + 8 * r), 0));
    for (int k = 0; k < kMaxStack / 8; ++k) {
      out.push_back(make_insn(BPF_LDX | BPF_MEM | BPF_DW, 1, 10,
                              static_cast<std::int16_t>(-kMaxStack + 8 * k), 0));
      out.push_back(make_insn(BPF_STX | BPF_MEM | BPF_DW, 9, 1,
                              static_cast<std::int16_t>(kStackAt + 8 * k), 0));
    }
    out.push_back(make_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
    // Subprograms after the main function; calls aim at their first instruction.
    std::vector<std::size_t> sub_start;
    for (const std::vector<Insn>& sub : subs_) {
      sub_start.push_back(out.size());
      out.insert(out.end(), sub.begin(), sub.end());
    }
    for (std::size_t u = 0; u < body.size(); ++u) {
      if (body[u].call_sub < 0) continue;
      Insn& call = out[start[u]];
      call.imm = static_cast<std::int32_t>(sub_start[static_cast<std::size_t>(body[u].call_sub)] -
                                           start[u] - 1);
    }
    return out;
  }

 private:
  std::mt19937 rng_;
  std::vector<std::vector<Insn>> subs_;  // the current program's subprograms

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  std::int32_t value32() {
    switch (pick(0, 5)) {
      case 0:
        return 0;
      case 1:
        return -1;
      case 2:
        return INT32_MIN;
      case 3:
        return pick(-70, 70);
      default:
        return static_cast<std::int32_t>(rng_());
    }
  }
  int reg() { return pick(0, 8); }  // r9 (the buffer) and r10 stay pointers
  // base register and offset of an in-bounds access of `size` bytes
  void place(int size, int& base, std::int16_t& off) {
    if (pick(0, 1)) {
      base = 9;
      off = static_cast<std::int16_t>(pick(0, (kData - size) / size) * size);
    } else {
      base = 10;
      off = static_cast<std::int16_t>(-pick(1, kMaxStack / size) * size);
    }
  }

  // One random ALU instruction writing `dst`.
  Insn alu(int dst) {
    static constexpr std::uint8_t kAluOps[] = {BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR,
                                               BPF_AND, BPF_LSH, BPF_RSH, BPF_NEG, BPF_MOD,
                                               BPF_XOR, BPF_MOV, BPF_ARSH};
    const std::uint8_t cls = pick(0, 1) ? BPF_ALU64 : BPF_ALU;
    const std::uint8_t op = kAluOps[pick(0, 12)];
    const bool x = op != BPF_NEG && pick(0, 1);
    std::int16_t off = 0;
    if ((op == BPF_DIV || op == BPF_MOD) && pick(0, 1)) off = 1;
    if (op == BPF_MOV && x && pick(0, 2) == 0) {
      static constexpr std::int16_t kSx[] = {8, 16, 32};
      off = kSx[pick(cls == BPF_ALU64 ? 0 : 0, cls == BPF_ALU64 ? 2 : 1)];
    }
    return make_insn(cls | op | (x ? BPF_X : BPF_K), dst, x ? reg() : 0, off,
                     op == BPF_NEG || x ? 0 : value32());
  }

  // A bounded back loop: counter = 1..8; body (ALU on other registers); counter -= 1; back while
  // it is not zero (a JMP or JMP32 jne K).
  Unit loop() {
    Unit u;
    const int counter = reg();
    u.insns.push_back(make_insn(BPF_ALU64 | BPF_MOV | BPF_K, counter, 0, 0, pick(1, 8)));
    const int body = pick(1, 4);
    for (int i = 0; i < body; ++i) {
      int dst = reg();
      while (dst == counter) dst = reg();
      u.insns.push_back(alu(dst));
    }
    u.insns.push_back(make_insn(BPF_ALU64 | BPF_SUB | BPF_K, counter, 0, 0, 1));
    u.insns.push_back(make_insn((pick(0, 1) ? BPF_JMP : BPF_JMP32) | BPF_JNE | BPF_K, counter, 0,
                                static_cast<std::int16_t>(-body - 2), 0));
    return u;
  }

  // A local call of a new subprogram: ALU on r0..r8 (r6..r8 come back as they were), a store
  // and a load in its own frame, exit.
  Unit local_call() {
    std::vector<Insn> sub;
    const int n = pick(1, 6);
    for (int i = 0; i < n; ++i) sub.push_back(alu(reg()));
    const int slot = pick(1, 8);
    sub.push_back(
        make_insn(BPF_STX | BPF_MEM | BPF_DW, 10, reg(), static_cast<std::int16_t>(-8 * slot), 0));
    sub.push_back(
        make_insn(BPF_LDX | BPF_MEM | BPF_DW, reg(), 10, static_cast<std::int16_t>(-8 * slot), 0));
    sub.push_back(alu(0));
    sub.push_back(make_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
    subs_.push_back(std::move(sub));
    Unit u;
    u.insns.push_back(make_insn(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 0));
    u.call_sub = static_cast<int>(subs_.size()) - 1;
    return u;
  }

  Unit unit(int index, int count) {
    Unit u;
    static constexpr std::uint8_t kSizes[] = {BPF_B, BPF_H, BPF_W, BPF_DW};
    const int kind = pick(0, 109);
    if (kind >= 100) return kind < 105 ? loop() : local_call();
    if (kind < 45) {  // ALU
      u.insns.push_back(alu(reg()));
    } else if (kind < 50) {  // byte order
      static constexpr std::int32_t kWidths[] = {16, 32, 64};
      const int variant = pick(0, 2);
      const std::uint8_t code = variant == 0   ? (BPF_ALU | BPF_END | BPF_TO_LE)
                                : variant == 1 ? (BPF_ALU | BPF_END | BPF_TO_BE)
                                               : (BPF_ALU64 | BPF_END | BPF_TO_LE);
      u.insns.push_back(make_insn(code, reg(), 0, 0, kWidths[pick(0, 2)]));
    } else if (kind < 53) {  // lddw
      const std::uint64_t v = (static_cast<std::uint64_t>(rng_()) << 32) | rng_();
      u.insns.push_back(
          make_insn(BPF_LD | BPF_IMM | BPF_DW, reg(), 0, 0, static_cast<std::int32_t>(v)));
      u.insns.push_back(make_insn(0, 0, 0, 0, static_cast<std::int32_t>(v >> 32)));
    } else if (kind < 68) {  // loads
      const std::uint8_t size = kSizes[pick(0, 3)];
      int base;
      std::int16_t off;
      place(insn_access_bytes(size), base, off);
      const bool sx = size != BPF_DW && pick(0, 2) == 0;
      u.insns.push_back(
          make_insn(BPF_LDX | size | (sx ? kModeMemsx : BPF_MEM), reg(), base, off, 0));
    } else if (kind < 80) {  // stores
      const std::uint8_t size = kSizes[pick(0, 3)];
      int base;
      std::int16_t off;
      place(insn_access_bytes(size), base, off);
      if (pick(0, 1)) {
        u.insns.push_back(make_insn(BPF_STX | size | BPF_MEM, base, reg(), off, 0));
      } else {
        u.insns.push_back(make_insn(BPF_ST | size | BPF_MEM, base, 0, off, value32()));
      }
    } else if (kind < 86) {  // atomics
      const bool w64 = pick(0, 1);
      int base;
      std::int16_t off;
      place(w64 ? 8 : 4, base, off);
      u.insns.push_back(make_insn(BPF_STX | BPF_ATOMIC | (w64 ? BPF_DW : BPF_W), base, reg(), off,
                                  kAtomicRmwOps[static_cast<std::size_t>(pick(0, 9))]));
    } else if (kind < 97) {  // forward jump
      static constexpr std::uint8_t kJumps[] = {BPF_JEQ, BPF_JGT,  BPF_JGE,  BPF_JSET,
                                                BPF_JNE, BPF_JSGT, BPF_JSGE, BPF_JLT,
                                                BPF_JLE, BPF_JSLT, BPF_JSLE, BPF_JA};
      const std::uint8_t op = kJumps[pick(0, 11)];
      const std::uint8_t cls = op == BPF_JA ? BPF_JMP : pick(0, 1) ? BPF_JMP : BPF_JMP32;
      const bool x = op != BPF_JA && pick(0, 1);
      u.insns.push_back(make_insn(cls | op | (x ? BPF_X : BPF_K), op == BPF_JA ? 0 : reg(),
                                  x ? reg() : 0, 0, op == BPF_JA || x ? 0 : value32()));
      u.jump_to_unit = pick(index + 1, count);
    } else {  // helper call; r1..r5 are undefined after it, so give them values again
      u.insns.push_back(make_insn(BPF_JMP | BPF_CALL, 0, 0, 0, 1));
      for (int r = 1; r <= 5; ++r)
        u.insns.push_back(make_insn(BPF_ALU64 | BPF_MOV | BPF_K, r, 0, 0, value32()));
    }
    return u;
  }
};

TEST(JitDifferential, GeneratedProgramsMatchTheInterpreter) {
  if (!jit_supported()) GTEST_SKIP() << "no JIT on this architecture";
  std::vector<HelperFn> helpers = {nullptr, mix_helper};
  Generator gen(20261127);
  std::vector<std::uint8_t> initial(kBufferSize);
  std::mt19937 fill(7);
  for (auto& b : initial) b = static_cast<std::uint8_t>(fill());
  alignas(8) std::uint8_t buffer[kBufferSize];
  const auto begin = reinterpret_cast<std::uintptr_t>(buffer);
  const MemoryRegion region{begin, begin + kBufferSize, true};
  int mismatches = 0;
  for (int p = 0; p < kPrograms && mismatches < 5; ++p) {
    const std::vector<Insn> insns = gen.program();
    auto vm = Interpreter::load(insns, {.helpers = helpers});
    ASSERT_TRUE(vm) << vm.error().message;
    std::memcpy(buffer, initial.data(), kBufferSize);
    const RunResult want = (*vm)->run(begin, kBufferSize, {&region, 1}, nullptr);
    ASSERT_EQ(want.status, RunStatus::kOk) << "program " << p;
    const std::vector<std::uint8_t> want_mem(buffer, buffer + kBufferSize);
    for (int mode = 0; mode < 4; ++mode) {
      const bool checked = (mode & 1) != 0;
      const bool blind = (mode & 2) != 0;  // constant blinding, as the runtime compiles
      auto jit = Jit::load(
          insns, {.helpers = helpers, .checked = checked, .budget = 0, .blind_constants = blind});
      ASSERT_TRUE(jit) << jit.error().message;
      std::memcpy(buffer, initial.data(), kBufferSize);
      const RunResult got = (*jit)->run(begin, kBufferSize, {&region, 1}, nullptr);
      EXPECT_EQ(got.status, RunStatus::kOk)
          << "program " << p << " checked " << checked << " blinded " << blind;
      EXPECT_EQ(got.r0, want.r0) << "program " << p << " checked " << checked << " blinded "
                                 << blind;
      const bool same = std::memcmp(buffer, want_mem.data(), kBufferSize) == 0;
      EXPECT_TRUE(same) << "program " << p << " checked " << checked << " blinded " << blind
                        << ": registers, stack or buffer differ";
      if (got.r0 != want.r0 || !same || got.status != RunStatus::kOk) ++mismatches;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

// The test can fail: a wrong result in the JIT's place is seen.
TEST(JitDifferential, ADifferenceIsSeen) {
  if (!jit_supported()) GTEST_SKIP() << "no JIT on this architecture";
  const std::vector<Insn> a = {make_insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 7),
                               make_insn(BPF_ALU64 | BPF_DIV | BPF_K, 0, 0, 0, 0),
                               make_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)};
  auto jit = Jit::load(a, {});
  ASSERT_TRUE(jit);
  EXPECT_EQ((*jit)->run(0, 0, {}, nullptr).r0, 0u);  // RFC 9669: x / 0 = 0
  EXPECT_NE((*jit)->run(0, 0, {}, nullptr).r0, 7u);
}

}  // namespace
}  // namespace userperf::bpf
