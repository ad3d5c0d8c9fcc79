// The dispatch loop: threaded code (g++ labels as values) over the decoded ops.
#include <bit>
#include <cerrno>
#include <cstring>
#include <type_traits>

#include "bpf/isa/shared_regions.hpp"
#include "bpf/vm/decoded_op.hpp"

namespace userperf::bpf::vm {

namespace {

// Everything a run may touch besides its stack: checked in order, run regions first.
struct Regions {
  std::span<const MemoryRegion> run;
  std::span<const MemoryRegion> statics;  // the running program's (a tail call changes them)

  bool allows(std::uint64_t addr, std::uint64_t size, bool write) const {
    for (const MemoryRegion& r : run) {
      if (r.allows(addr, size, write)) return true;
    }
    for (const MemoryRegion& r : statics) {
      if (r.allows(addr, size, write)) return true;
    }
    for (const MemoryRegion& r : shared) {
      if (r.allows(addr, size, write)) return true;
    }
    return false;
  }
  std::span<const MemoryRegion> shared;  // inner maps of map-in-map slots (shared_regions.hpp)
};

// Signed division and modulo as RFC 9669 defines them: by 0 gives 0 (div) or the dividend (mod);
// INT_MIN / -1 wraps to INT_MIN and INT_MIN % -1 is 0 (C++ leaves both undefined).
template <class U>
inline U signed_div(U a, U b) {
  using S = std::make_signed_t<U>;
  if (b == 0) return 0;
  if (static_cast<S>(b) == -1) return U{0} - a;
  return static_cast<U>(static_cast<S>(a) / static_cast<S>(b));
}

template <class U>
inline U signed_mod(U a, U b) {
  using S = std::make_signed_t<U>;
  if (b == 0) return a;
  if (static_cast<S>(b) == -1) return 0;
  return static_cast<U>(static_cast<S>(a) % static_cast<S>(b));
}

template <class T>
inline T load(std::uint64_t addr) {
  T value;
  std::memcpy(&value, reinterpret_cast<const void*>(addr), sizeof(T));
  return value;
}

template <class T>
inline void store(std::uint64_t addr, T value) {
  std::memcpy(reinterpret_cast<void*>(addr), &value, sizeof(T));
}

template <bool kBudgeted>
RunResult run_loop(const Program& program, std::uint64_t r1, std::uint64_t r2,
                   std::span<const MemoryRegion> run_regions, void* env, int* tail_count) {
  static const void* const kDispatch[] = {
#define USERPERF_BPF_LABEL(name) &&op_##name,
      USERPERF_BPF_OPS(USERPERF_BPF_LABEL)
#undef USERPERF_BPF_LABEL
  };
  static_assert(sizeof(kDispatch) / sizeof(kDispatch[0]) == static_cast<int>(OpKind::kCount));

  // A caller's program (its ops and static regions) is saved too: a tail call in a subprogram
  // replaces the program only until that frame returns. A callback's frame also holds its
  // helper's driver: return_to is the LOOP op, after which the callback's exit asks the driver
  // whether to call again or to end the helper.
  struct Callback {
    const CallbackDriver* driver = nullptr;  // nullptr: an ordinary call frame
    std::uint32_t callback = 0;
    CallbackState state;
  };
  struct Frame {
    const Op* return_to;
    std::uint64_t saved[4];  // r6..r9
    const Program* program;
    Callback loop;
  };
  CallbackStep step;
  alignas(16) std::uint8_t stack[kMaxCallFrames * kMaxStack];
  Frame frames[kMaxCallFrames];
  int depth = 0;

  const Program* prog = &program;
  const Op* ops = program.ops.data();
  const Op* pc = ops;
  int own_tail_calls = 0;
  int& tail_calls = tail_count != nullptr ? *tail_count : own_tail_calls;
  const std::uint64_t stack_top = reinterpret_cast<std::uintptr_t>(stack) + sizeof(stack);
  std::uint64_t stack_low = stack_top - kMaxStack;  // the lowest byte of the active frames
  Regions regions{run_regions, program.static_regions, shared_regions()};
  std::uint64_t remaining = program.instruction_budget;

  std::uint64_t reg[kNumRegs] = {0, r1, r2, 0, 0, 0, 0, 0, 0, 0, stack_top};

  // Helpers see this run's regions (the active stack first, then run()'s) and the running
  // program's static ones (CallContext::statics). Built when some helper may run: a program that
  // calls one or tail-calls (its target may).
  MemoryRegion* call_regions = nullptr;
  std::size_t call_region_count = 0;
  if (program.calls_helpers) {
    call_region_count = 1 + run_regions.size();
    call_regions =
        static_cast<MemoryRegion*>(__builtin_alloca(call_region_count * sizeof(MemoryRegion)));
    std::size_t n = 1;
    for (const MemoryRegion& r : run_regions) call_regions[n++] = r;
  }

  std::uint64_t addr = 0;
  std::uint64_t size = 0;
  HelperFn helper = nullptr;

  auto index_of = [&](const Op* op) { return static_cast<std::uint32_t>(op - ops); };

#define DISPATCH()                                                                         \
  do {                                                                                     \
    if constexpr (kBudgeted) {                                                             \
      if (remaining-- == 0) return RunResult{RunStatus::kBudget, reg[0], index_of(pc), 0}; \
    }                                                                                      \
    goto* kDispatch[static_cast<std::uint8_t>(pc->kind)];                                  \
  } while (0)
#define NEXT()  \
  do {          \
    ++pc;       \
    DISPATCH(); \
  } while (0)
#define JUMP_IF(cond)     \
  do {                    \
    if (cond) {           \
      pc = ops + pc->off; \
      DISPATCH();         \
    }                     \
    NEXT();               \
  } while (0)

#define DST reg[pc->dst]
#define SRC reg[pc->src]
#define IMM pc->imm
#define DST32 static_cast<std::uint32_t>(reg[pc->dst])

// Memory: the active stack first (the common case), then the regions.
#define CHECK_ACCESS(base, bytes, write)                                                        \
  do {                                                                                          \
    addr = (base) + static_cast<std::uint64_t>(static_cast<std::int64_t>(pc->off));             \
    size = (bytes);                                                                             \
    if (!(addr >= stack_low && addr <= stack_top - size) && !regions.allows(addr, size, write)) \
      goto fault;                                                                               \
  } while (0)

  DISPATCH();

  // ALU64
#define ALU64(name, expr)        \
  op_##name##64_K : {            \
    const std::uint64_t b = IMM; \
    DST = (expr);                \
    NEXT();                      \
  }                              \
  op_##name##64_X : {            \
    const std::uint64_t b = SRC; \
    DST = (expr);                \
    NEXT();                      \
  }
#define ALU32(name, expr)                                    \
  op_##name##32_K : {                                        \
    const std::uint32_t a = DST32;                           \
    const std::uint32_t b = static_cast<std::uint32_t>(IMM); \
    DST = static_cast<std::uint32_t>(expr);                  \
    NEXT();                                                  \
  }                                                          \
  op_##name##32_X : {                                        \
    const std::uint32_t a = DST32;                           \
    const std::uint32_t b = static_cast<std::uint32_t>(SRC); \
    DST = static_cast<std::uint32_t>(expr);                  \
    NEXT();                                                  \
  }

  ALU64(ADD, DST + b)
  ALU64(SUB, DST - b)
  ALU64(MUL, DST * b)
  ALU64(DIV, b ? DST / b : 0)
  ALU64(SDIV, signed_div(DST, b))
  ALU64(OR, DST | b)
  ALU64(AND, DST & b)
  ALU64(LSH, DST << (b & 63))
  ALU64(RSH, DST >> (b & 63))
  ALU64(MOD, b ? DST % b : DST)
  ALU64(SMOD, signed_mod(DST, b))
  ALU64(XOR, DST ^ b)
  ALU64(MOV, b)
  ALU64(ARSH, static_cast<std::uint64_t>(static_cast<std::int64_t>(DST) >> (b & 63)))

  ALU32(ADD, a + b)
  ALU32(SUB, a - b)
  ALU32(MUL, a * b)
  ALU32(DIV, b ? a / b : 0)
  ALU32(SDIV, signed_div(a, b))
  ALU32(OR, a | b)
  ALU32(AND, a & b)
  ALU32(LSH, a << (b & 31))
  ALU32(RSH, a >> (b & 31))
  ALU32(MOD, b ? a % b : a)
  ALU32(SMOD, signed_mod(a, b))
  ALU32(XOR, a ^ b)
  ALU32(MOV, (static_cast<void>(a), b))
  ALU32(ARSH, static_cast<std::uint32_t>(static_cast<std::int32_t>(a) >> (b & 31)))

op_NEG64:
  DST = 0 - DST;
  NEXT();
op_NEG32:
  DST = static_cast<std::uint32_t>(0u - DST32);
  NEXT();
op_MOVSX8_64:
  DST = static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int8_t>(SRC)));
  NEXT();
op_MOVSX16_64:
  DST = static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int16_t>(SRC)));
  NEXT();
op_MOVSX32_64:
  DST = static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(SRC)));
  NEXT();
op_MOVSX8_32:
  DST = static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int8_t>(SRC)));
  NEXT();
op_MOVSX16_32:
  DST = static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int16_t>(SRC)));
  NEXT();
  // Byte order: the host is little-endian, so `le` truncates and `be`/`bswap` swap.
op_LE16:
  DST = static_cast<std::uint16_t>(DST);
  NEXT();
op_LE32:
  DST = static_cast<std::uint32_t>(DST);
  NEXT();
op_LE64:
  NEXT();
op_BE16:
op_BSWAP16:
  DST = __builtin_bswap16(static_cast<std::uint16_t>(DST));
  NEXT();
op_BE32:
op_BSWAP32:
  DST = __builtin_bswap32(static_cast<std::uint32_t>(DST));
  NEXT();
op_BE64:
op_BSWAP64:
  DST = __builtin_bswap64(DST);
  NEXT();

  // Jumps
#define JMP64(name, cmp)                  \
  op_##name##64_K : {                     \
    const std::uint64_t a = DST, b = IMM; \
    JUMP_IF(cmp);                         \
  }                                       \
  op_##name##64_X : {                     \
    const std::uint64_t a = DST, b = SRC; \
    JUMP_IF(cmp);                         \
  }
#define JMP32(name, cmp)                                                \
  op_##name##32_K : {                                                   \
    const std::uint32_t a = DST32, b = static_cast<std::uint32_t>(IMM); \
    JUMP_IF(cmp);                                                       \
  }                                                                     \
  op_##name##32_X : {                                                   \
    const std::uint32_t a = DST32, b = static_cast<std::uint32_t>(SRC); \
    JUMP_IF(cmp);                                                       \
  }
#define S64(v) static_cast<std::int64_t>(v)
#define S32(v) static_cast<std::int32_t>(v)
  JMP64(JEQ, a == b)
  JMP64(JGT, a > b)
  JMP64(JGE, a >= b)
  JMP64(JSET, (a & b) != 0)
  JMP64(JNE, a != b)
  JMP64(JSGT, S64(a) > S64(b))
  JMP64(JSGE, S64(a) >= S64(b))
  JMP64(JLT, a < b)
  JMP64(JLE, a <= b)
  JMP64(JSLT, S64(a) < S64(b))
  JMP64(JSLE, S64(a) <= S64(b))
  JMP32(JEQ, a == b)
  JMP32(JGT, a > b)
  JMP32(JGE, a >= b)
  JMP32(JSET, (a & b) != 0)
  JMP32(JNE, a != b)
  JMP32(JSGT, S32(a) > S32(b))
  JMP32(JSGE, S32(a) >= S32(b))
  JMP32(JLT, a < b)
  JMP32(JLE, a <= b)
  JMP32(JSLT, S32(a) < S32(b))
  JMP32(JSLE, S32(a) <= S32(b))

op_JA:
  pc = ops + pc->off;
  DISPATCH();

op_LDDW:
  DST = IMM;
  pc += 2;
  DISPATCH();

op_CALLX : {
  const std::uint64_t id = DST;
  helper = id < prog->helpers.size() ? prog->helpers[id] : nullptr;
  goto call_helper;
}
op_CALL_HELPER:
  helper = reinterpret_cast<HelperFn>(static_cast<std::uintptr_t>(IMM));
  goto call_helper;
call_helper : {
  if (helper == nullptr) return RunResult{RunStatus::kBadHelper, reg[0], index_of(pc), 0};
  call_regions[0] = MemoryRegion{stack_low, stack_top, true};
  CallContext call{env, std::span<const MemoryRegion>(call_regions, call_region_count),
                   prog->static_regions, false};
  reg[0] = helper(reg[1], reg[2], reg[3], reg[4], reg[5], call);
  if (call.abort) return RunResult{RunStatus::kAborted, reg[0], index_of(pc), 0};
  NEXT();
}

op_CALL_LOCAL:
  if (depth + 1 >= kMaxCallFrames) return RunResult{RunStatus::kCallDepth, reg[0], index_of(pc), 0};
  frames[depth] = Frame{pc + 1, {reg[6], reg[7], reg[8], reg[9]}, prog, {}};
  ++depth;
  reg[10] -= kMaxStack;
  stack_low -= kMaxStack;
  pc = ops + pc->off;
  DISPATCH();

op_EXIT:
  if (depth == 0) return RunResult{RunStatus::kOk, reg[0], 0, 0};
  --depth;
  reg[6] = frames[depth].saved[0];
  reg[7] = frames[depth].saved[1];
  reg[8] = frames[depth].saved[2];
  reg[9] = frames[depth].saved[3];
  reg[10] += kMaxStack;
  stack_low += kMaxStack;
  pc = frames[depth].return_to;
  if (frames[depth].program != prog) {  // the frame above made a tail call
    prog = frames[depth].program;
    ops = prog->ops.data();
    regions.statics = prog->static_regions;
  }
  if (frames[depth].loop.driver != nullptr) {  // a callback returned to its helper
    Callback& cb = frames[depth].loop;
    step = cb.driver->resume(reg[0], env, cb.state);
    if (!step.call) {
      reg[0] = step.result;
      NEXT();
    }
    goto enter_callback;
  }
  DISPATCH();

  // A helper that calls a callback (bpf_loop, bpf_find_vma): its driver decides whether and with
  // what the callback runs, in a frame of its own; its exit comes back to the driver (op_EXIT).
op_LOOP : {
  const auto* driver = reinterpret_cast<const CallbackDriver*>(static_cast<std::uintptr_t>(IMM));
  CallbackState state;
  step = driver->begin(&reg[1], env, state);
  if (!step.call) {
    reg[0] = step.result;
    NEXT();
  }
  const std::uint64_t target = reg[driver->callback_arg];
  bool is_callback = false;
  for (std::uint32_t start : prog->callbacks) is_callback = is_callback || start == target;
  if (!is_callback) return RunResult{RunStatus::kBadHelper, reg[0], index_of(pc), 0};
  if (depth + 1 >= kMaxCallFrames) return RunResult{RunStatus::kCallDepth, reg[0], index_of(pc), 0};
  frames[depth] = Frame{pc,
                        {reg[6], reg[7], reg[8], reg[9]},
                        prog,
                        {driver, static_cast<std::uint32_t>(target), state}};
  goto enter_callback;
}
enter_callback : {
  const Callback& cb = frames[depth].loop;
  ++depth;
  reg[10] -= kMaxStack;
  stack_low -= kMaxStack;
  for (int r = 0; r < 5; ++r) reg[r + 1] = step.args[r];
  pc = ops + cb.callback;
  DISPATCH();
}

  // A load the verifier typed through a BTF pointer: the synthetic kernel memory, 0 on failure.
op_PROBE_LDX:
  DST =
      probe_load(prog->probe_read, env,
                 SRC + static_cast<std::uint64_t>(static_cast<std::int64_t>(pc->off)), pc->unused);
  NEXT();

  // bpf_tail_call(ctx, map, index), as the kernel's interpreter: an index out of range, then the
  // count (33 per run), then an empty slot continue after the call with the registers unchanged;
  // otherwise the target starts at its first instruction in this frame with r1..r9 as they are.
op_TAIL_CALL : {
  const TailCallSlot slot = prog->tail_call(reg[2], static_cast<std::uint32_t>(reg[3]));
  if (!slot.in_range || tail_calls >= kMaxTailCalls) NEXT();
  ++tail_calls;
  if (slot.target == nullptr) NEXT();
  prog = &program_of(*slot.target);
  ops = prog->ops.data();
  pc = ops;
  regions.statics = prog->static_regions;
  reg[10] = stack_low + kMaxStack;
  DISPATCH();
}

// Loads and stores
#define LDX(name, T, R)                                            \
  op_##name : CHECK_ACCESS(SRC, sizeof(T), false);                 \
  DST = static_cast<std::uint64_t>(static_cast<R>(load<T>(addr))); \
  NEXT();
  LDX(LDXB, std::uint8_t, std::uint8_t)
  LDX(LDXH, std::uint16_t, std::uint16_t)
  LDX(LDXW, std::uint32_t, std::uint32_t)
  LDX(LDXDW, std::uint64_t, std::uint64_t)
  LDX(LDXSB, std::int8_t, std::int64_t)
  LDX(LDXSH, std::int16_t, std::int64_t)
  LDX(LDXSW, std::int32_t, std::int64_t)
#define ST(name, T, value)                        \
  op_##name : CHECK_ACCESS(DST, sizeof(T), true); \
  store<T>(addr, static_cast<T>(value));          \
  NEXT();
  ST(STB, std::uint8_t, IMM)
  ST(STH, std::uint16_t, IMM)
  ST(STW, std::uint32_t, IMM)
  ST(STDW, std::uint64_t, IMM)
  ST(STXB, std::uint8_t, SRC)
  ST(STXH, std::uint16_t, SRC)
  ST(STXW, std::uint32_t, SRC)
  ST(STXDW, std::uint64_t, SRC)

  // Atomics on the real memory (map values are shared between threads); they must be aligned.
#define ATOMIC_ADDR(T)                     \
  CHECK_ACCESS(DST, sizeof(T), true);      \
  if (addr % sizeof(T) != 0) goto fault;   \
  T* const p = reinterpret_cast<T*>(addr); \
  const T v = static_cast<T>(SRC)
#define ATOMIC(name, T, builtin)           \
  op_ATOMIC_##name : {                     \
    ATOMIC_ADDR(T);                        \
    builtin(p, v, __ATOMIC_SEQ_CST);       \
    NEXT();                                \
  }                                        \
  op_ATOMIC_FETCH_##name : {               \
    ATOMIC_ADDR(T);                        \
    SRC = builtin(p, v, __ATOMIC_SEQ_CST); \
    NEXT();                                \
  }
  ATOMIC(ADD32, std::uint32_t, __atomic_fetch_add)
  ATOMIC(OR32, std::uint32_t, __atomic_fetch_or)
  ATOMIC(AND32, std::uint32_t, __atomic_fetch_and)
  ATOMIC(XOR32, std::uint32_t, __atomic_fetch_xor)
  ATOMIC(ADD64, std::uint64_t, __atomic_fetch_add)
  ATOMIC(OR64, std::uint64_t, __atomic_fetch_or)
  ATOMIC(AND64, std::uint64_t, __atomic_fetch_and)
  ATOMIC(XOR64, std::uint64_t, __atomic_fetch_xor)
#define XCHG(W, T)                                                                           \
  op_ATOMIC_XCHG##W : {                                                                      \
    ATOMIC_ADDR(T);                                                                          \
    SRC = __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);                                       \
    NEXT();                                                                                  \
  }                                                                                          \
  op_ATOMIC_CMPXCHG##W : {                                                                   \
    ATOMIC_ADDR(T);                                                                          \
    T expected = static_cast<T>(reg[0]);                                                     \
    __atomic_compare_exchange_n(p, &expected, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
    reg[0] = expected; /* the old value, whether or not it matched */                        \
    NEXT();                                                                                  \
  }
  XCHG(32, std::uint32_t)
  XCHG(64, std::uint64_t)

fault:
  return RunResult{RunStatus::kFault, reg[0], index_of(pc), static_cast<std::uintptr_t>(addr)};

#undef DISPATCH
#undef NEXT
#undef JUMP_IF
#undef DST
#undef SRC
#undef IMM
#undef DST32
#undef CHECK_ACCESS
#undef ALU64
#undef ALU32
#undef JMP64
#undef JMP32
#undef S64
#undef S32
#undef LDX
#undef ST
#undef ATOMIC_ADDR
#undef ATOMIC
#undef XCHG
}

}  // namespace

RunResult execute(const Program& program, std::uint64_t r1, std::uint64_t r2,
                  std::span<const MemoryRegion> regions, void* env, int* tail_calls) {
  if (program.instruction_budget != 0) {
    return run_loop<true>(program, r1, r2, regions, env, tail_calls);
  }
  return run_loop<false>(program, r1, r2, regions, env, tail_calls);
}

}  // namespace userperf::bpf::vm
