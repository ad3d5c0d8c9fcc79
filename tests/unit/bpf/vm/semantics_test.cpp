// ISA semantics of the interpreter: the edge cases RFC 9669 defines and runtimes get wrong.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "vm_test_support.hpp"

namespace userperf::bpf {
namespace {

using testing::r0_of;
using testing::run_asm;

std::string prog(const std::string& body) {
  return body + "\nexit\n";
}

TEST(Semantics, DivisionAndModuloByZero) {
  EXPECT_EQ(r0_of(prog("lddw %r0, 0x123456789\nmov %r1, 0\ndiv %r0, %r1")), 0u);
  EXPECT_EQ(r0_of(prog("lddw %r0, 0x123456789\nmov %r1, 0\nmod %r0, %r1")), 0x123456789u);
  EXPECT_EQ(r0_of(prog("lddw %r0, 0x123456789\nmov %r1, 0\ndiv32 %r0, %r1")), 0u);
  // 32-bit mod by zero keeps dst's low half and zeroes the upper half.
  EXPECT_EQ(r0_of(prog("lddw %r0, 0x123456789\nmov %r1, 0\nmod32 %r0, %r1")), 0x23456789u);
  EXPECT_EQ(r0_of(prog("lddw %r0, 0x123456789\nmod32 %r0, 0")), 0x23456789u);
  EXPECT_EQ(r0_of(prog("mov %r0, -7\nmov %r1, 0\nsdiv %r0, %r1")), 0u);
  EXPECT_EQ(r0_of(prog("mov %r0, -7\nmov %r1, 0\nsmod %r0, %r1")), static_cast<std::uint64_t>(-7));
  EXPECT_EQ(r0_of(prog("mov %r0, -7\nsmod32 %r0, 0")), 0xfffffff9u);
}

TEST(Semantics, SignedDivisionOverflowAndTruncation) {
  EXPECT_EQ(r0_of(prog("lddw %r0, 0x8000000000000000\nsdiv %r0, -1")), 0x8000000000000000u);
  EXPECT_EQ(r0_of(prog("lddw %r0, 0x8000000000000000\nsmod %r0, -1")), 0u);
  EXPECT_EQ(r0_of(prog("mov32 %r0, 0x80000000\nsdiv32 %r0, -1")), 0x80000000u);
  EXPECT_EQ(r0_of(prog("mov32 %r0, 0x80000000\nmov %r1, -1\nsmod32 %r0, %r1")), 0u);
  EXPECT_EQ(r0_of(prog("mov %r0, -7\nsdiv %r0, 2")), static_cast<std::uint64_t>(-3));
  EXPECT_EQ(r0_of(prog("mov %r0, -7\nsmod %r0, 2")), static_cast<std::uint64_t>(-1));
  EXPECT_EQ(r0_of(prog("mov %r0, 7\nsmod %r0, -2")), 1u);
  EXPECT_EQ(r0_of(prog("mov32 %r0, -7\nsmod32 %r0, 2")), 0xffffffffu);
  // Unsigned division treats the sign-extended immediate as unsigned.
  EXPECT_EQ(r0_of(prog("mov %r0, -1\ndiv %r0, -1")), 1u);
  EXPECT_EQ(r0_of(prog("mov32 %r0, -1\ndiv32 %r0, 2")), 0x7fffffffu);
}

TEST(Semantics, ThirtyTwoBitOpsZeroTheUpperHalfAndShiftsMask) {
  EXPECT_EQ(r0_of(prog("mov %r0, -1\nadd32 %r0, 1")), 0u);
  EXPECT_EQ(r0_of(prog("mov %r0, -1\nmov32 %r0, %r0")), 0xffffffffu);
  EXPECT_EQ(r0_of(prog("mov %r0, 1\nlsh %r0, 65")), 2u);
  EXPECT_EQ(r0_of(prog("mov %r0, 1\nmov %r1, 33\nlsh32 %r0, %r1")), 2u);
  EXPECT_EQ(r0_of(prog("mov32 %r0, 0x80000000\narsh32 %r0, 4")), 0xf8000000u);
  EXPECT_EQ(r0_of(prog("mov %r0, -16\narsh %r0, 2")), static_cast<std::uint64_t>(-4));
  EXPECT_EQ(r0_of(prog("mov %r0, -1\nneg32 %r0")), 1u);
  EXPECT_EQ(r0_of(prog("mov %r0, 1\nneg %r0")), ~0ull);
  EXPECT_EQ(r0_of(prog("mov %r0, 3\nmul32 %r0, -1")), 0xfffffffdu);
}

TEST(Semantics, MovsxInBothWidths) {
  EXPECT_EQ(r0_of(prog("mov %r1, 0x80\nmovsx864 %r0, %r1")), ~0ull << 7);
  EXPECT_EQ(r0_of(prog("mov %r1, 0x80\nmovsx832 %r0, %r1")), 0xffffff80u);
  EXPECT_EQ(r0_of(prog("mov %r1, 0x8000\nmovsx1664 %r0, %r1")), ~0ull << 15);
  EXPECT_EQ(r0_of(prog("mov %r1, 0x8000\nmovsx1632 %r0, %r1")), 0xffff8000u);
  EXPECT_EQ(r0_of(prog("mov32 %r1, 0x80000000\nmovsx3264 %r0, %r1")), ~0ull << 31);
  EXPECT_EQ(r0_of(prog("mov %r1, 0x7f\nmovsx864 %r0, %r1")), 0x7fu);
}

TEST(Semantics, SignExtendingLoads) {
  std::vector<std::uint8_t> memory = {0x80, 0xff, 0x00, 0x80, 0x7f, 0, 0, 0};
  EXPECT_EQ(r0_of(prog("ldxsb %r0, [%r1]"), &memory), ~0ull << 7);
  EXPECT_EQ(r0_of(prog("ldxsh %r0, [%r1]"), &memory), static_cast<std::uint64_t>(-128));
  EXPECT_EQ(r0_of(prog("ldxsw %r0, [%r1]"), &memory), 0xffffffff8000ff80u);
  EXPECT_EQ(r0_of(prog("ldxsb %r0, [%r1+4]"), &memory), 0x7fu);
  EXPECT_EQ(r0_of(prog("ldxw %r0, [%r1]"), &memory), 0x8000ff80u);
}

TEST(Semantics, ByteSwapsClearTheHighBits) {
  const std::string value = "lddw %r0, 0x1122334455667788\n";
  EXPECT_EQ(r0_of(prog(value + "le16 %r0")), 0x7788u);
  EXPECT_EQ(r0_of(prog(value + "le32 %r0")), 0x55667788u);
  EXPECT_EQ(r0_of(prog(value + "le64 %r0")), 0x1122334455667788u);
  EXPECT_EQ(r0_of(prog(value + "be16 %r0")), 0x8877u);
  EXPECT_EQ(r0_of(prog(value + "be32 %r0")), 0x88776655u);
  EXPECT_EQ(r0_of(prog(value + "be64 %r0")), 0x8877665544332211u);
  EXPECT_EQ(r0_of(prog(value + "bswap16 %r0")), 0x8877u);
  EXPECT_EQ(r0_of(prog(value + "bswap32 %r0")), 0x88776655u);
  EXPECT_EQ(r0_of(prog(value + "bswap64 %r0")), 0x8877665544332211u);
}

// All 20 atomic forms: the memory after, and the value each returns in src (or r0).
TEST(Semantics, EveryAtomicForm) {
  struct Case {
    const char* op;
    std::uint64_t after;     // the memory word afterwards
    std::uint64_t returned;  // %r1 afterwards (the old value for fetch forms, else unchanged)
  };
  const std::uint64_t old_value = 0xf0f0f0f0f0f0f0f0, operand = 0x0ff000000ff00001;
  const Case cases64[] = {
      {"add", old_value + operand, operand}, {"fetch add", old_value + operand, old_value},
      {"or", old_value | operand, operand},  {"fetch or", old_value | operand, old_value},
      {"and", old_value & operand, operand}, {"fetch and", old_value & operand, old_value},
      {"xor", old_value ^ operand, operand}, {"fetch xor", old_value ^ operand, old_value},
      {"xchg", operand, old_value},
  };
  for (const Case& c : cases64) {
    for (bool wide : {true, false}) {
      std::vector<std::uint8_t> memory(16);
      std::memcpy(memory.data() + 8, &old_value, 8);
      std::string text = "lddw %r2, " + std::to_string(operand) + "\nmov %r3, %r2\nmov %r0, %r1\n" +
                         "mov %r1, %r2\nlock " + c.op + (wide ? "" : "32") +
                         " [%r0+8], %r1\nmov %r0, %r1\nexit\n";
      std::uint64_t r1 = r0_of(text, &memory);
      std::uint64_t after = 0;
      std::memcpy(&after, memory.data() + 8, 8);
      if (wide) {
        EXPECT_EQ(after, c.after) << c.op;
        EXPECT_EQ(r1, c.returned) << c.op;
      } else {
        // 32-bit: only the low word changes; a fetched value is zero-extended.
        const std::uint64_t expect_after = (old_value & ~0xffffffffull) | (c.after & 0xffffffff);
        EXPECT_EQ(after, expect_after) << c.op << "32";
        const std::uint64_t expect_r1 = c.returned == operand ? operand : c.returned & 0xffffffff;
        EXPECT_EQ(r1, expect_r1) << c.op << "32";
      }
    }
  }
}

TEST(Semantics, CmpxchgComparesWithR0AndReturnsTheOldValue) {
  for (bool wide : {true, false}) {
    const std::string w = wide ? "" : "32";
    // Match: memory takes r1, r0 = old.
    std::string hit = "stdw [%r10-8], 5\nmov %r0, 5\nmov %r1, 9\nlock cmpxchg" + w +
                      " [%r10-8], %r1\nldxdw %r2, [%r10-8]\nlsh %r2, 8\nor %r0, %r2\nexit\n";
    EXPECT_EQ(r0_of(hit), 5u | (9u << 8)) << w;
    // Mismatch: memory unchanged, r0 = old.
    std::string miss = "stdw [%r10-8], 5\nmov %r0, 6\nmov %r1, 9\nlock cmpxchg" + w +
                       " [%r10-8], %r1\nldxdw %r2, [%r10-8]\nlsh %r2, 8\nor %r0, %r2\nexit\n";
    EXPECT_EQ(r0_of(miss), 5u | (5u << 8)) << w;
  }
  // 32-bit compares only the low half of r0, and zero-extends the old value into r0.
  EXPECT_EQ(r0_of("stw [%r10-8], -1\nmov %r0, -1\nmov %r1, 1\nlock cmpxchg32 [%r10-8], %r1\n"
                  "exit\n"),
            0xffffffffu);
}

TEST(Semantics, Jmp32ComparesTheLowHalf) {
  EXPECT_EQ(r0_of("lddw %r1, 0x100000005\nmov %r0, 0\njeq32 %r1, 5, +1\nexit\nmov %r0, 1\nexit"),
            1u);
  EXPECT_EQ(r0_of("lddw %r1, 0x100000005\nmov %r0, 0\njeq %r1, 5, +1\nexit\nmov %r0, 1\nexit"), 0u);
  EXPECT_EQ(r0_of("mov32 %r1, -1\nmov %r0, 0\njsgt32 %r1, 0, +1\nexit\nmov %r0, 1\nexit"), 0u);
  EXPECT_EQ(r0_of("mov32 %r1, -1\nmov %r0, 0\njsgt %r1, 0, +1\nexit\nmov %r0, 1\nexit"), 1u);
  EXPECT_EQ(r0_of("mov %r1, 6\nmov %r0, 0\njset32 %r1, 2, +1\nexit\nmov %r0, 1\nexit"), 1u);
}

TEST(Semantics, Ja32TakesItsOffsetFromImm) {
  std::string text = "mov %r0, 1\nja32 far\n";
  for (int i = 0; i < 40000; ++i) text += "mov %r0, 2\n";  // beyond a 16-bit offset
  text += "far: exit\n";
  EXPECT_EQ(r0_of(text), 1u);
}

TEST(Semantics, LocalCallsPreserveR6ToR9AndGetAFreshFrame) {
  const char* text = R"(
    mov %r6, 6
    mov %r9, 9
    stdw [%r10-8], 77
    mov %r1, %r10
    call local callee
    # r0 = callee's r10 distance below ours; the caller's slot must still hold 77
    ldxdw %r2, [%r10-8]
    jne %r2, 77, bad
    jne %r6, 6, bad
    jne %r9, 9, bad
    exit
  bad:
    mov %r0, -1
    exit
  callee:
    stdw [%r10-8], 1
    mov %r6, 0
    mov %r9, 0
    mov %r0, %r1
    sub %r0, %r10
    # the caller's frame is reachable through the pointer it passed
    ldxdw %r3, [%r1-8]
    jne %r3, 77, bad2
    exit
  bad2:
    mov %r0, -2
    exit
  )";
  EXPECT_EQ(r0_of(text), static_cast<std::uint64_t>(kMaxStack));
}

TEST(Semantics, CallDepthIsLimited) {
  // depth N: r1 counts down; each level calls the next.
  auto nested = [](int calls) {
    return "mov %r1, " + std::to_string(calls) + R"(
      call local f
      exit
    f:
      jeq %r1, 1, done
      sub %r1, 1
      call local f
    done:
      mov %r0, 7
      exit
    )";
  };
  EXPECT_EQ(r0_of(nested(kMaxCallFrames - 1)), 7u);  // main + 7 callees = 8 frames
  RunResult deep = run_asm(nested(kMaxCallFrames));
  EXPECT_EQ(deep.status, RunStatus::kCallDepth);
}

TEST(Semantics, InstructionBudget) {
  InterpreterOptions options;
  options.instruction_budget = 1000;
  RunResult loop = run_asm("l: ja l", nullptr, options);
  EXPECT_EQ(loop.status, RunStatus::kBudget);
  EXPECT_EQ(loop.pc, 0u);
  // Exactly the budget is allowed; one less is not.
  options.instruction_budget = 3;
  EXPECT_EQ(run_asm("mov %r0, 1\nmov %r0, 2\nexit", nullptr, options).status, RunStatus::kOk);
  options.instruction_budget = 2;
  RunResult short_budget = run_asm("mov %r0, 1\nmov %r0, 2\nexit", nullptr, options);
  EXPECT_EQ(short_budget.status, RunStatus::kBudget);
  EXPECT_EQ(short_budget.pc, 2u);
}

void* seen_env = nullptr;

std::uint64_t add_helper(std::uint64_t r1, std::uint64_t r2, std::uint64_t r3, std::uint64_t r4,
                         std::uint64_t r5, CallContext& call) {
  seen_env = call.env;
  return r1 + r2 + r3 + r4 + r5;
}

std::uint64_t abort_helper(std::uint64_t r1, std::uint64_t, std::uint64_t, std::uint64_t,
                           std::uint64_t, CallContext& call) {
  call.abort = true;
  return r1;
}

// Reports whether [r1, r1 + r2) is accessible for writing.
std::uint64_t probe_helper(std::uint64_t r1, std::uint64_t r2, std::uint64_t, std::uint64_t,
                           std::uint64_t, CallContext& call) {
  return call.may_access(r1, r2, true) ? 1 : 0;
}

TEST(Semantics, HelpersByIdAbortAndBadIds) {
  InterpreterOptions options;
  options.helpers = {nullptr, add_helper, abort_helper, probe_helper};
  auto interpreter = testing::load_asm(
      "mov %r1, 1\nmov %r2, 2\nmov %r3, 3\nmov %r4, 4\nmov %r5, 5\ncall 1\nexit", options);
  ASSERT_TRUE(interpreter);
  RunResult sum = interpreter->run(0, 0, {}, reinterpret_cast<void*>(0x1234));
  EXPECT_EQ(sum.status, RunStatus::kOk);
  EXPECT_EQ(sum.r0, 15u);
  EXPECT_EQ(seen_env, reinterpret_cast<void*>(0x1234));

  RunResult aborted = run_asm("mov %r1, 42\ncall 2\nmov %r0, 0\nexit", nullptr, options);
  EXPECT_EQ(aborted.status, RunStatus::kAborted);
  EXPECT_EQ(aborted.r0, 42u);
  EXPECT_EQ(aborted.pc, 1u);

  RunResult bad = run_asm("call 9\nexit", nullptr, options);
  EXPECT_EQ(bad.status, RunStatus::kBadHelper);
  EXPECT_EQ(run_asm("call 0\nexit", nullptr, options).status, RunStatus::kBadHelper);
  EXPECT_EQ(run_asm("call -1\nexit", nullptr, options).status, RunStatus::kBadHelper);
  EXPECT_EQ(run_asm("mov %r3, 1000\ncall %r3\nexit", nullptr, options).status,
            RunStatus::kBadHelper);
  RunResult callx = run_asm(
      "mov %r6, 1\nmov %r1, 40\nmov %r2, 2\nmov %r3, 0\nmov %r4, 0\n"
      "mov %r5, 0\ncall %r6\nexit",
      nullptr, options);
  EXPECT_EQ(callx.status, RunStatus::kOk);
  EXPECT_EQ(callx.r0, 42u);
}

TEST(Semantics, HelpersSeeTheStackAndTheRegions) {
  InterpreterOptions options;
  options.helpers = {nullptr, nullptr, nullptr, probe_helper};
  std::vector<std::uint8_t> memory(32);
  EXPECT_EQ(run_asm("mov %r1, %r10\nsub %r1, 512\nmov %r2, 512\ncall 3\nexit", &memory, options).r0,
            1u);
  EXPECT_EQ(run_asm("mov %r1, %r10\nsub %r1, 513\nmov %r2, 8\ncall 3\nexit", &memory, options).r0,
            0u);
  EXPECT_EQ(run_asm("mov %r2, 32\ncall 3\nexit", &memory, options).r0, 1u);
  EXPECT_EQ(run_asm("mov %r2, 33\ncall 3\nexit", &memory, options).r0, 0u);
  EXPECT_EQ(run_asm("mov %r2, -1\ncall 3\nexit", &memory, options).r0, 0u);  // wraps
}

TEST(Semantics, FaultsReportTheAddress) {
  std::vector<std::uint8_t> memory(16);
  const auto base = reinterpret_cast<std::uintptr_t>(memory.data());
  RunResult null_load = run_asm("mov %r1, 0\nldxdw %r0, [%r1+8]\nexit", &memory);
  EXPECT_EQ(null_load.status, RunStatus::kFault);
  EXPECT_EQ(null_load.fault_addr, 8u);
  EXPECT_EQ(null_load.pc, 1u);
  RunResult straddle = run_asm("ldxdw %r0, [%r1+12]\nexit", &memory);
  EXPECT_EQ(straddle.status, RunStatus::kFault);
  EXPECT_EQ(straddle.fault_addr, base + 12);
  EXPECT_EQ(run_asm("ldxw %r0, [%r1+12]\nexit", &memory).status, RunStatus::kOk);
  EXPECT_EQ(run_asm("ldxb %r0, [%r10-513]\nexit").status, RunStatus::kFault);
  EXPECT_EQ(run_asm("ldxb %r0, [%r10]\nexit").status, RunStatus::kFault);
  EXPECT_EQ(run_asm("ldxb %r0, [%r10-512]\nexit").status, RunStatus::kOk);
  EXPECT_EQ(run_asm("lock add [%r10-4], %r1\nexit").status, RunStatus::kFault);  // misaligned
  // Read-only regions take loads, not stores.
  std::uint64_t word = 0x55;
  MemoryRegion read_only = testing::region_of(&word, sizeof(word), false);
  auto load = testing::load_asm("ldxdw %r0, [%r1]\nexit");
  auto store = testing::load_asm("stdw [%r1], 1\nexit");
  ASSERT_TRUE(load && store);
  EXPECT_EQ(load->run(read_only.begin, 0, {&read_only, 1}, nullptr).r0, 0x55u);
  RunResult denied = store->run(read_only.begin, 0, {&read_only, 1}, nullptr);
  EXPECT_EQ(denied.status, RunStatus::kFault);
  EXPECT_EQ(denied.fault_addr, read_only.begin);
  EXPECT_EQ(word, 0x55u);
  // Static regions are reachable from every run.
  InterpreterOptions options;
  options.static_regions = {testing::region_of(&word, sizeof(word), true)};
  auto with_static = testing::load_asm("stdw [%r1], 2\nexit", options);
  ASSERT_TRUE(with_static);
  EXPECT_EQ(with_static->run(read_only.begin, 0, {}, nullptr).status, RunStatus::kOk);
  EXPECT_EQ(word, 2u);
}

TEST(Load, RejectsStructuralErrors) {
  struct Case {
    std::vector<Insn> insns;
    const char* message;
  };
  const Case cases[] = {
      {{}, "empty program"},
      {{make_insn(0x05, 0, 0, 5, 0), make_insn(0x95, 0, 0, 0, 0)},
       "instruction 0: jump out of range"},
      {{make_insn(0x05, 0, 0, -2, 0), make_insn(0x95, 0, 0, 0, 0)},
       "instruction 0: jump out of range"},
      {{make_insn(0x95, 0, 0, 0, 0), make_insn(0x18, 0, 0, 0, 1)},
       "instruction 1: incomplete lddw"},
      {{make_insn(0x18, 0, 0, 0, 1), make_insn(0x07, 0, 0, 0, 1), make_insn(0x95, 0, 0, 0, 0)},
       "instruction 0: bad second slot of lddw"},
      {{make_insn(0x05, 0, 0, 1, 0), make_insn(0x18, 0, 0, 0, 1), make_insn(0, 0, 0, 0, 0),
        make_insn(0x95, 0, 0, 0, 0)},
       "instruction 0: jump into the middle of lddw"},
      {{make_insn(0xff, 0, 0, 0, 0), make_insn(0x95, 0, 0, 0, 0)}, "instruction 0: unknown"},
      {{make_insn(0xb7, 11, 0, 0, 0), make_insn(0x95, 0, 0, 0, 0)},
       "instruction 0: register number above r10"},
      {{make_insn(0xb7, 10, 0, 0, 0), make_insn(0x95, 0, 0, 0, 0)},
       "instruction 0: frame pointer is read only"},
      {{make_insn(0xb7, 0, 0, 0, 0)}, "instruction 0: the last instruction can fall through"},
      {{make_insn(0x15, 0, 0, -1, 0)}, "instruction 0: the last instruction can fall through"},
      {{make_insn(0x18, 1, BPF_PSEUDO_MAP_IDX, 0, 0), make_insn(0, 0, 0, 0, 0),
        make_insn(0x95, 0, 0, 0, 0)},
       "instruction 0: unrelocated lddw pseudo source 5"},
      {{make_insn(0x85, 0, BPF_PSEUDO_CALL, 0, 5), make_insn(0x95, 0, 0, 0, 0)},
       "instruction 0: jump out of range"},
      {{make_insn(0x20, 0, 0, 0, 0), make_insn(0x95, 0, 0, 0, 0)},
       "instruction 0: legacy packet access is not supported"},
  };
  for (const Case& c : cases) {
    auto interpreter = Interpreter::load(c.insns, {});
    ASSERT_FALSE(interpreter.ok()) << c.message;
    EXPECT_EQ(interpreter.error().code, EINVAL);
    EXPECT_TRUE(interpreter.error().message.starts_with(c.message))
        << interpreter.error().message << " vs " << c.message;
  }
}

}  // namespace
}  // namespace userperf::bpf
