// The interpreter's internal form: one 16-byte op per instruction slot, specialised by operand
// kind (K/X, 32/64, size) so the dispatch loop does no further decoding.
#pragma once

#include <cstdint>
#include <vector>

#include "bpf/vm/interpreter.hpp"

namespace userperf::bpf::vm {

// X(name): every op kind, in the order of the dispatch table.
#define USERPERF_BPF_ALU_OPS(X, W) \
  X(ADD##W##_K)                    \
  X(ADD##W##_X)                    \
  X(SUB##W##_K)                    \
  X(SUB##W##_X)                    \
  X(MUL##W##_K)                    \
  X(MUL##W##_X)                    \
  X(DIV##W##_K)                    \
  X(DIV##W##_X)                    \
  X(SDIV##W##_K)                   \
  X(SDIV##W##_X)                   \
  X(OR##W##_K)                     \
  X(OR##W##_X)                     \
  X(AND##W##_K)                    \
  X(AND##W##_X)                    \
  X(LSH##W##_K)                    \
  X(LSH##W##_X)                    \
  X(RSH##W##_K)                    \
  X(RSH##W##_X)                    \
  X(NEG##W)                        \
  X(MOD##W##_K)                    \
  X(MOD##W##_X)                    \
  X(SMOD##W##_K)                   \
  X(SMOD##W##_X)                   \
  X(XOR##W##_K)                    \
  X(XOR##W##_X)                    \
  X(MOV##W##_K)                    \
  X(MOV##W##_X)                    \
  X(MOVSX8_##W)                    \
  X(MOVSX16_##W)                   \
  X(ARSH##W##_K)                   \
  X(ARSH##W##_X)

#define USERPERF_BPF_JMP_OPS(X, W) \
  X(JEQ##W##_K)                    \
  X(JEQ##W##_X)                    \
  X(JGT##W##_K)                    \
  X(JGT##W##_X)                    \
  X(JGE##W##_K)                    \
  X(JGE##W##_X)                    \
  X(JSET##W##_K)                   \
  X(JSET##W##_X)                   \
  X(JNE##W##_K)                    \
  X(JNE##W##_X)                    \
  X(JSGT##W##_K)                   \
  X(JSGT##W##_X)                   \
  X(JSGE##W##_K)                   \
  X(JSGE##W##_X)                   \
  X(JLT##W##_K)                    \
  X(JLT##W##_X)                    \
  X(JLE##W##_K)                    \
  X(JLE##W##_X)                    \
  X(JSLT##W##_K)                   \
  X(JSLT##W##_X)                   \
  X(JSLE##W##_K)                   \
  X(JSLE##W##_X)

// clang-format off
#define USERPERF_BPF_OPS(X)                                                                     \
  USERPERF_BPF_ALU_OPS(X, 64)                                                                   \
  USERPERF_BPF_ALU_OPS(X, 32)                                                                   \
  X(MOVSX32_64)                                                                                 \
  X(LE16) X(LE32) X(LE64) X(BE16) X(BE32) X(BE64) X(BSWAP16) X(BSWAP32) X(BSWAP64)              \
  USERPERF_BPF_JMP_OPS(X, 64)                                                                   \
  USERPERF_BPF_JMP_OPS(X, 32)                                                                   \
  X(JA) X(CALL_HELPER) X(CALL_LOCAL) X(CALLX) X(EXIT) X(LDDW) X(TAIL_CALL) X(LOOP)              \
  X(LDXB) X(LDXH) X(LDXW) X(LDXDW) X(LDXSB) X(LDXSH) X(LDXSW) X(PROBE_LDX)                     \
  X(STB) X(STH) X(STW) X(STDW) X(STXB) X(STXH) X(STXW) X(STXDW)                                 \
  X(ATOMIC_ADD32) X(ATOMIC_OR32) X(ATOMIC_AND32) X(ATOMIC_XOR32)                                \
  X(ATOMIC_FETCH_ADD32) X(ATOMIC_FETCH_OR32) X(ATOMIC_FETCH_AND32) X(ATOMIC_FETCH_XOR32)        \
  X(ATOMIC_XCHG32) X(ATOMIC_CMPXCHG32)                                                          \
  X(ATOMIC_ADD64) X(ATOMIC_OR64) X(ATOMIC_AND64) X(ATOMIC_XOR64)                                \
  X(ATOMIC_FETCH_ADD64) X(ATOMIC_FETCH_OR64) X(ATOMIC_FETCH_AND64) X(ATOMIC_FETCH_XOR64)        \
  X(ATOMIC_XCHG64) X(ATOMIC_CMPXCHG64)
// clang-format on

enum class OpKind : std::uint8_t {
#define USERPERF_BPF_ENUM(name) name,
  USERPERF_BPF_OPS(USERPERF_BPF_ENUM)
#undef USERPERF_BPF_ENUM
      kCount
};
static_assert(static_cast<int>(OpKind::kCount) <= 256);

struct Op {
  OpKind kind;
  std::uint8_t dst;
  std::uint8_t src;
  std::uint8_t unused = 0;
  // Memory ops: the offset. Jumps and local calls: the absolute target index.
  std::int32_t off;
  // K operands sign-extended to 64 bits; lddw's 64-bit value; a helper's HelperFn (or 0); LOOP:
  // the helper's CallbackDriver.
  std::uint64_t imm;
};
static_assert(sizeof(Op) == 16);

struct Program {
  std::vector<Op> ops;
  std::vector<HelperFn> helpers;
  std::vector<MemoryRegion> static_regions;
  std::uint64_t instruction_budget = 0;
  bool calls_helpers = false;  // CallContext regions are built only when some helper may run
  TailCallResolver tail_call = nullptr;  // helper 12 became TAIL_CALL ops
  std::vector<std::uint32_t> callbacks;  // the functions whose address an lddw takes (LOOP)
  ProbeRead probe_read = nullptr;        // PROBE_LDX: unused = size | 0x80 when sign-extending
};

// The decoded program of an interpreter (a tail call's target).
const Program& program_of(const Interpreter& interpreter);

// Checks the structure of `insns` and translates them; the error names the instruction.
Expected<Program> decode(std::span<const Insn> insns, InterpreterOptions options);

// Runs a decoded program (execute.cpp). SIGNAL-SAFE, reentrant. `tail_calls`: the run's count of
// tail calls, when it began in another tier (a JIT-compiled program whose tail call reached a
// program that only the interpreter runs); read and updated. nullptr: a run of its own.
RunResult execute(const Program& program, std::uint64_t r1, std::uint64_t r2,
                  std::span<const MemoryRegion> regions, void* env, int* tail_calls = nullptr);

}  // namespace userperf::bpf::vm
