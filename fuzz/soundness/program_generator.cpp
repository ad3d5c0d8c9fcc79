#include "program_generator.hpp"

#include <array>

#include "bpf/isa/opcode_facts.hpp"

namespace userperf::soundness {

using bpf::Insn;
using bpf::make_insn;

namespace {

// Registers: r6 the ctx, r7 the pointer under test, r8 the bounded scalar, r9 a loop counter;
// r0..r5 are each unit's scratch (helper calls clobber them).
constexpr int kCtx = 6, kPtr = 7, kScalar = 8, kCounter = 9;
// Stack: the accumulator at -8 (the program's result), the key at -16, the area the prologue
// zeroes [-kZeroed, 0): the units' slots and buffers lie inside it, their off-by-ones just below.
constexpr int kAccumulator = -8;
constexpr int kKeySlot = -16;
constexpr int kZeroed = 320;

constexpr std::uint8_t kSizes[] = {BPF_B, BPF_H, BPF_W, BPF_DW};
constexpr int kBytes[] = {1, 2, 4, 8};
constexpr std::uint32_t kValueSize[] = {8, 48, 256, 16};

Insn mov_k(int dst, std::int32_t imm) {
  return make_insn(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm);
}
Insn mov_x(int dst, int src) {
  return make_insn(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0);
}
Insn add_k(int dst, std::int32_t imm) {
  return make_insn(BPF_ALU64 | BPF_ADD | BPF_K, dst, 0, 0, imm);
}
Insn add_x(int dst, int src) {
  return make_insn(BPF_ALU64 | BPF_ADD | BPF_X, dst, src, 0, 0);
}
Insn ldx(std::uint8_t size, int dst, int src, int off) {
  return make_insn(BPF_LDX | BPF_MEM | size, dst, src, static_cast<std::int16_t>(off), 0);
}
Insn stx(std::uint8_t size, int dst, int src, int off) {
  return make_insn(BPF_STX | BPF_MEM | size, dst, src, static_cast<std::int16_t>(off), 0);
}
Insn st(std::uint8_t size, int dst, int off, std::int32_t imm) {
  return make_insn(BPF_ST | BPF_MEM | size, dst, 0, static_cast<std::int16_t>(off), imm);
}
Insn call(std::int32_t helper) {
  return make_insn(BPF_JMP | BPF_CALL, 0, 0, 0, helper);
}
void lddw_map(std::vector<Insn>& out, int dst, std::int32_t map) {
  out.push_back(make_insn(BPF_LD | BPF_IMM | BPF_DW, dst, BPF_PSEUDO_MAP_IDX, 0, map));
  out.push_back(make_insn(0, 0, 0, 0, 0));
}
// r0 = bpf_map_lookup_elem(map, &key), the key stored at kKeySlot.
void lookup(std::vector<Insn>& out, std::int32_t map, std::int32_t key) {
  out.push_back(st(BPF_W, 10, kKeySlot, key));
  out.push_back(mov_x(2, 10));
  out.push_back(add_k(2, kKeySlot));
  lddw_map(out, 1, map);
  out.push_back(call(BPF_FUNC_map_lookup_elem));
}

}  // namespace

std::vector<bpf::MapSpec> campaign_maps() {
  std::vector<bpf::MapSpec> maps;
  auto add = [&](const char* name, std::uint32_t type, std::uint32_t value) {
    bpf::MapSpec m;
    m.name = name;
    m.type = type;
    m.key_size = 4;
    m.value_size = value;
    m.max_entries = 1;
    maps.push_back(m);
  };
  add("array8", BPF_MAP_TYPE_ARRAY, kValueSize[kArray8]);
  add("array48", BPF_MAP_TYPE_ARRAY, kValueSize[kArray48]);
  add("array256", BPF_MAP_TYPE_ARRAY, kValueSize[kArray256]);
  add("hash16", BPF_MAP_TYPE_HASH, kValueSize[kHash16]);
  return maps;
}

std::int32_t ProgramGenerator::near(std::int32_t value) {
  const int r = pick(0, 9);
  return r == 0 ? value + 1 : r == 1 ? value - 1 : value;
}

void ProgramGenerator::exit_if(Unit& u, std::uint8_t op, bool jmp32, int reg, std::int32_t imm) {
  u.to_exit.push_back(u.insns.size());
  u.insns.push_back(make_insn((jmp32 ? BPF_JMP32 : BPF_JMP) | op | BPF_K, reg, 0, 0, imm));
}

void ProgramGenerator::access(Unit& u, int base, std::int16_t off, bool allow_store) {
  const int s = pick(0, 3);
  const std::uint8_t size = kSizes[s];
  switch (allow_store ? pick(0, 2) : 0) {
    case 0:
      u.insns.push_back(ldx(size, 2, base, off));
      if (chance(50)) {
        Unit acc = accumulate(2);
        u.insns.insert(u.insns.end(), acc.insns.begin(), acc.insns.end());
      }
      break;
    case 1:
      u.insns.push_back(st(size, base, off, pick(-3, 3)));
      break;
    default:
      u.insns.push_back(stx(size, base, kScalar, off));
  }
}

ProgramGenerator::Unit ProgramGenerator::accumulate(int reg) {
  Unit u;
  u.insns.push_back(ldx(BPF_DW, 1, 10, kAccumulator));
  u.insns.push_back(make_insn(BPF_ALU64 | BPF_XOR | BPF_X, 1, reg, 0, 0));
  u.insns.push_back(stx(BPF_DW, 10, 1, kAccumulator));
  return u;
}

// r8 = something the verifier knows little or nothing about.
ProgramGenerator::Unit ProgramGenerator::scalar_source() {
  Unit u;
  switch (pick(0, 5)) {
    case 0:  // a register of the sample: unknown 64 bits
      u.insns.push_back(ldx(BPF_DW, kScalar, kCtx, 8 * pick(0, 20)));
      break;
    case 1:  // sample_period's low 32 bits
      u.insns.push_back(ldx(BPF_W, kScalar, kCtx, 168));
      break;
    case 2:
      u.insns.push_back(call(BPF_FUNC_get_prandom_u32));
      u.insns.push_back(mov_x(kScalar, 0));
      break;
    case 3:
      u.insns.push_back(call(BPF_FUNC_get_current_pid_tgid));
      u.insns.push_back(mov_x(kScalar, 0));
      break;
    case 4: {  // a byte, half or word of a map value
      const auto map = static_cast<std::int32_t>(pick(0, 3));
      lookup(u.insns, map, 0);
      exit_if(u, BPF_JEQ, false, 0, 0);
      if (chance(30)) {  // sign-extending (BPF_MEMSX)
        u.insns.push_back(
            make_insn(BPF_LDX | bpf::kModeMemsx | kSizes[pick(0, 2)], kScalar, 0, 0, 0));
      } else {
        u.insns.push_back(ldx(kSizes[pick(0, 3)], kScalar, 0, 0));
      }
      break;
    }
    default:
      u.insns.push_back(mov_k(kScalar, pick(-8, 300)));
  }
  return u;
}

// Bounds on r8: masks, 32- and 64-bit compares (signed and unsigned, some one off or missing
// their lower half), shifts and truncations after them.
ProgramGenerator::Unit ProgramGenerator::bound_scalar() {
  Unit u;
  static constexpr std::array<std::int32_t, 10> kLimits = {7, 8, 15, 16, 40, 47, 48, 63, 248, 255};
  const std::int32_t limit = kLimits[static_cast<std::size_t>(pick(0, 9))];
  const bool jmp32 = chance(40);
  switch (pick(0, 7)) {
    case 0:
      u.insns.push_back(make_insn(BPF_ALU64 | BPF_AND | BPF_K, kScalar, 0, 0, near(limit)));
      break;
    case 1:
      u.insns.push_back(make_insn(BPF_ALU | BPF_AND | BPF_K, kScalar, 0, 0, near(limit)));
      break;
    case 2:
      exit_if(u, BPF_JGT, jmp32, kScalar, near(limit));
      break;
    case 3:
      exit_if(u, BPF_JGE, jmp32, kScalar, near(limit));
      break;
    case 4:  // signed: both halves, or (sometimes) the upper only
      exit_if(u, BPF_JSGT, jmp32, kScalar, near(limit));
      if (chance(80)) exit_if(u, BPF_JSLT, jmp32, kScalar, chance(90) ? 0 : -1);
      break;
    case 5:  // a 32-bit view first
      u.insns.push_back(make_insn(BPF_ALU | BPF_MOV | BPF_X, kScalar, kScalar, 0, 0));
      exit_if(u, chance(50) ? BPF_JGT : BPF_JSGT, true, kScalar, near(limit));
      break;
    case 6:  // bounded, then shifted or offset (the bounds move with it)
      exit_if(u, BPF_JGT, jmp32, kScalar, near(limit / 8));
      u.insns.push_back(make_insn(BPF_ALU64 | BPF_LSH | BPF_K, kScalar, 0, 0, 3));
      break;
    default:  // a lower bound through a register compare against a bounded register
      u.insns.push_back(mov_k(3, near(limit)));
      u.to_exit.push_back(u.insns.size());
      u.insns.push_back(
          make_insn((jmp32 ? BPF_JMP32 : BPF_JMP) | (chance(50) ? BPF_JGT : BPF_JGE) | BPF_X,
                    kScalar, 3, 0, 0));
  }
  if (chance(15))
    u.insns.push_back(make_insn((chance(50) ? BPF_ALU : BPF_ALU64) | BPF_ADD | BPF_K, kScalar, 0, 0,
                                pick(-2, 2)));
  return u;
}

// Arithmetic on the bounded r8: every ALU op at both widths with constants and with a second
// bounded register, sign extensions, byte swaps, then (sometimes) a refining compare. This is
// where a verifier's bounds tracking goes wrong.
ProgramGenerator::Unit ProgramGenerator::scalar_arith() {
  Unit u;
  static constexpr std::uint8_t kOps[] = {BPF_ADD, BPF_SUB, BPF_MUL, BPF_OR,   BPF_AND,
                                          BPF_LSH, BPF_RSH, BPF_XOR, BPF_ARSH, BPF_NEG,
                                          BPF_MOV, BPF_DIV, BPF_MOD};
  const int count = pick(1, 3);
  for (int i = 0; i < count; ++i) {
    const std::uint8_t cls = chance(60) ? BPF_ALU64 : BPF_ALU;
    const std::uint8_t op = kOps[pick(0, 12)];
    const bool shift = op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH;
    if (op != BPF_NEG && chance(35)) {  // with r3, itself bounded or a constant
      if (chance(50)) {
        u.insns.push_back(mov_k(3, pick(-4, shift ? 40 : 64)));
      } else {
        u.insns.push_back(ldx(BPF_DW, 3, kCtx, 8 * pick(0, 20)));
        u.insns.push_back(make_insn(BPF_ALU64 | BPF_AND | BPF_K, 3, 0, 0, shift ? 31 : 63));
      }
      std::int16_t off = 0;
      if (op == BPF_MOV && chance(50)) off = static_cast<std::int16_t>(8 << pick(0, 2));
      if ((op == BPF_DIV || op == BPF_MOD) && chance(30)) off = 1;
      u.insns.push_back(make_insn(cls | op | BPF_X, kScalar, 3, off, 0));
    } else if (op == BPF_MOV) {  // a sign extension of r8 itself
      u.insns.push_back(make_insn(cls | BPF_MOV | BPF_X, kScalar, kScalar,
                                  static_cast<std::int16_t>(chance(30) ? 0 : 8 << pick(0, 2)), 0));
    } else {
      const std::int32_t imm = shift        ? pick(0, cls == BPF_ALU64 ? 63 : 31)
                               : chance(50) ? pick(-9, 9)
                                            : static_cast<std::int32_t>(rng_() >> pick(33, 60));
      u.insns.push_back(make_insn(cls | op | BPF_K, kScalar, 0, 0,
                                  op == BPF_NEG                                  ? 0
                                  : (op == BPF_DIV || op == BPF_MOD) && imm == 0 ? 3
                                                                                 : imm));
    }
  }
  if (chance(25)) {  // a byte swap
    static constexpr std::int32_t kWidths[] = {16, 32, 64};
    u.insns.push_back(make_insn(BPF_ALU | BPF_END | (chance(50) ? BPF_TO_BE : BPF_TO_LE), kScalar,
                                0, 0, kWidths[pick(0, 2)]));
  }
  if (chance(40)) {  // a JSET or a register compare refining it
    if (chance(50)) {
      u.to_exit.push_back(u.insns.size());
      u.insns.push_back(make_insn((chance(50) ? BPF_JMP : BPF_JMP32) | BPF_JSET | BPF_K, kScalar, 0,
                                  0, static_cast<std::int32_t>(~0xf8u)));
    } else {
      u.insns.push_back(mov_k(3, near(64)));
      u.to_exit.push_back(u.insns.size());
      static constexpr std::uint8_t kCmp[] = {BPF_JGT, BPF_JGE,  BPF_JSGT, BPF_JSGE, BPF_JLT,
                                              BPF_JLE, BPF_JSLT, BPF_JSLE, BPF_JNE};
      u.insns.push_back(make_insn((chance(50) ? BPF_JMP : BPF_JMP32) | kCmp[pick(0, 8)] | BPF_X,
                                  chance(50) ? kScalar : 3, chance(50) ? 3 : kScalar, 0, 0));
    }
  }
  return u;
}

// Loads of struct bpf_perf_event_data: valid fields and sizes, and near misses (the end, narrow
// regs, stores, a moved or variable ctx pointer).
ProgramGenerator::Unit ProgramGenerator::ctx_access() {
  Unit u;
  int base = kCtx;
  int off = 0;
  std::uint8_t size = BPF_DW;
  switch (pick(0, 9)) {
    case 0:
    case 1:
    case 2:
      off = 8 * pick(0, 20);
      break;
    case 3:
    case 4: {  // sample_period or addr, any width, any aligned offset inside
      const int s = pick(0, 3);
      size = kSizes[s];
      off = (chance(50) ? 168 : 176) + kBytes[s] * pick(0, 8 / kBytes[s] - 1);
      break;
    }
    case 5:  // just past the end, or misaligned, or narrow regs
      off = chance(50) ? near(184) : 8 * pick(0, 22) + pick(1, 7);
      size = kSizes[pick(0, 3)];
      break;
    case 6:  // a moved ctx pointer
      u.insns.push_back(mov_x(3, kCtx));
      u.insns.push_back(add_k(3, 8 * pick(0, 22)));
      base = 3;
      break;
    case 7:  // a variable ctx offset
      u.insns.push_back(mov_x(3, kCtx));
      u.insns.push_back(add_x(3, kScalar));
      base = 3;
      break;
    case 8:  // a store
      u.insns.push_back(st(BPF_DW, kCtx, 168, 1));
      return u;
    default:  // r7 = ctx, for later units
      u.insns.push_back(mov_x(kPtr, kCtx));
      if (chance(30)) u.insns.push_back(add_k(kPtr, 8 * pick(0, 23)));
      return u;
  }
  u.insns.push_back(ldx(size, 2, base, off));
  Unit acc = accumulate(2);
  u.insns.insert(u.insns.end(), acc.insns.begin(), acc.insns.end());
  return u;
}

// r7 = fp - K (+ r8), then an access through it.
ProgramGenerator::Unit ProgramGenerator::stack_access() {
  Unit u;
  static constexpr std::array<int, 6> kFrom = {256, 128, 64, 48, 24, 16};
  const int from = kFrom[static_cast<std::size_t>(pick(0, 5))];
  u.insns.push_back(mov_x(kPtr, 10));
  u.insns.push_back(add_k(kPtr, -near(from)));
  int off = 0;
  if (chance(50)) {
    // A variable offset: usually r8 masked to whole slots below `from`.
    u.insns.push_back(mov_x(3, kScalar));
    if (chance(75)) {
      u.insns.push_back(make_insn(BPF_ALU64 | BPF_AND | BPF_K, 3, 0, 0, near(from - 8) & ~7));
    }
    u.insns.push_back(add_x(kPtr, 3));
    off = near(0);
  } else {
    off = from - 8 * pick(1, from / 8) + (chance(10) ? pick(1, 8) : 0);
  }
  access(u, kPtr, static_cast<std::int16_t>(off), true);
  return u;
}

// A map lookup (the NULL check sometimes missing), then accesses at constant and variable
// offsets near the value's end.
ProgramGenerator::Unit ProgramGenerator::map_access() {
  Unit u;
  const auto map = static_cast<std::int32_t>(pick(0, 3));
  const int value_size = static_cast<int>(kValueSize[map]);
  lookup(u.insns, map, chance(85) ? 0 : 1);
  const int check = pick(0, 19);
  if (check == 0) {
    // no NULL check
  } else if (check == 1) {  // the check the wrong way round
    exit_if(u, BPF_JNE, false, 0, 0);
  } else {
    exit_if(u, BPF_JEQ, check == 2, 0, 0);  // JMP32 on a pointer: the kernel's view varies
  }
  u.insns.push_back(mov_x(kPtr, 0));
  const int accesses = pick(1, 3);
  for (int i = 0; i < accesses; ++i) {
    if (chance(50)) {
      const int s = pick(0, 3);
      const int last = value_size - kBytes[s];
      const int off = chance(70) ? kBytes[s] * pick(0, last / kBytes[s]) : near(last + 1);
      if (chance(50)) {
        u.insns.push_back(ldx(kSizes[s], 2, kPtr, off));
        Unit acc = accumulate(2);
        u.insns.insert(u.insns.end(), acc.insns.begin(), acc.insns.end());
      } else {
        u.insns.push_back(st(kSizes[s], kPtr, off, pick(-3, 3)));
      }
    } else {  // r8, bounded here (usually) by the value's size, as an offset
      u.insns.push_back(mov_x(4, kScalar));
      if (chance(75)) {
        exit_if(u, chance(50) ? BPF_JGT : BPF_JSGT, chance(40), 4, near(value_size - 8));
        if (chance(80)) exit_if(u, BPF_JSLT, false, 4, 0);
      }
      u.insns.push_back(mov_x(3, kPtr));
      u.insns.push_back(add_x(3, 4));
      access(u, 3, static_cast<std::int16_t>(chance(80) ? 0 : pick(-8, 8)), true);
    }
  }
  return u;
}

// Spills and fills of r7 (a pointer, usually) and r8 (a bounded scalar): full and partial width,
// sometimes with a narrower store over the spilled slot in between.
ProgramGenerator::Unit ProgramGenerator::spill_fill() {
  Unit u;
  const int slot = -8 * pick(3, 9);
  const bool pointer = chance(50);
  const int reg = pointer ? kPtr : kScalar;
  const int spill = chance(80) ? 3 : pick(0, 2);
  u.insns.push_back(stx(kSizes[spill], 10, reg, slot));
  if (chance(15)) u.insns.push_back(st(kSizes[pick(0, 2)], 10, slot + 4 * pick(0, 1), 0));
  const int fill = chance(75) ? 3 : pick(0, 2);
  u.insns.push_back(ldx(kSizes[fill], reg, 10, slot));
  if (pointer) {
    access(u, kPtr, static_cast<std::int16_t>(8 * pick(0, 2)), true);
  } else if (chance(50)) {
    Unit acc = accumulate(kScalar);
    u.insns.insert(u.insns.end(), acc.insns.begin(), acc.insns.end());
  }
  return u;
}

// Helpers with memory arguments (buffer and size, a map's key and value) and plain ones.
ProgramGenerator::Unit ProgramGenerator::helper_call() {
  Unit u;
  switch (pick(0, 5)) {
    case 0:
    case 1: {  // probe_read_kernel / probe_read into the stack or into r7, size const or r8
      const bool into_ptr = chance(30);
      const int buffer = 8 * pick(2, 32);
      if (into_ptr) {
        u.insns.push_back(mov_x(1, kPtr));
      } else {
        u.insns.push_back(mov_x(1, 10));
        u.insns.push_back(add_k(1, -buffer));
      }
      if (chance(50)) {
        u.insns.push_back(mov_k(2, near(into_ptr ? 8 : buffer)));
      } else {
        u.insns.push_back(mov_x(2, kScalar));
      }
      u.insns.push_back(mov_k(3, 0));
      u.insns.push_back(call(chance(50) ? BPF_FUNC_probe_read_kernel : BPF_FUNC_probe_read));
      break;
    }
    case 2: {  // get_current_comm into the stack
      const int buffer = 8 * pick(1, 4);
      u.insns.push_back(mov_x(1, 10));
      u.insns.push_back(add_k(1, -(kZeroed / 2) + buffer));
      u.insns.push_back(mov_k(2, near(16)));
      u.insns.push_back(call(BPF_FUNC_get_current_comm));
      break;
    }
    case 3: {  // map_update_elem with a stack value of about the value's size
      const auto map = static_cast<std::int32_t>(pick(0, 3));
      const int value = static_cast<int>(kValueSize[map]);
      u.insns.push_back(st(BPF_W, 10, kKeySlot, pick(0, 1)));
      lddw_map(u.insns, 1, map);
      u.insns.push_back(mov_x(2, 10));
      u.insns.push_back(add_k(2, kKeySlot));
      u.insns.push_back(mov_x(3, 10));
      u.insns.push_back(add_k(3, -near(value + 16) + (chance(80) ? 0 : value)));
      if (chance(15)) u.insns.push_back(mov_x(3, kPtr));
      u.insns.push_back(mov_k(4, 0));
      u.insns.push_back(call(BPF_FUNC_map_update_elem));
      break;
    }
    case 4: {  // map_delete_elem: a key on the stack, or r7
      u.insns.push_back(st(BPF_W, 10, kKeySlot, pick(0, 1)));
      lddw_map(u.insns, 1, kHash16);
      u.insns.push_back(mov_x(2, 10));
      u.insns.push_back(add_k(2, chance(85) ? kKeySlot : -near(2)));
      u.insns.push_back(call(BPF_FUNC_map_delete_elem));
      break;
    }
    default:
      u.insns.push_back(call(chance(50) ? BPF_FUNC_ktime_get_ns : BPF_FUNC_get_smp_processor_id));
  }
  Unit acc = accumulate(0);
  u.insns.insert(u.insns.end(), acc.insns.begin(), acc.insns.end());
  return u;
}

// r9 = 0; do { fp[-base + 8 * r9] = r9; r9 += 1 } while (r9 < N): N near the buffer's slots.
ProgramGenerator::Unit ProgramGenerator::bounded_loop() {
  Unit u;
  const int base = 8 * pick(4, 32);
  const bool jmp32 = chance(40);
  u.insns.push_back(mov_k(kCounter, 0));
  u.insns.push_back(mov_x(2, 10));
  u.insns.push_back(add_k(2, -base));
  u.insns.push_back(mov_x(3, kCounter));
  u.insns.push_back(make_insn(BPF_ALU64 | BPF_LSH | BPF_K, 3, 0, 0, 3));
  u.insns.push_back(add_x(2, 3));
  u.insns.push_back(stx(BPF_DW, 2, kCounter, 0));
  u.insns.push_back(add_k(kCounter, 1));
  u.insns.push_back(
      make_insn((jmp32 ? BPF_JMP32 : BPF_JMP) | (chance(80) ? BPF_JLT : BPF_JLE) | BPF_K, kCounter,
                0, -8, near(base / 8)));
  return u;
}

// An atomic read-modify-write (add, or, and, xor, each with and without BPF_FETCH; xchg;
// cmpxchg), 32 or 64 bits, on a slot of the zeroed stack (sometimes misaligned), the stack at a
// variable offset, a map value (constant offset, sometimes just past the end) or, refused, the
// ctx or whatever r7 holds. The operand is a copy of r8 or (sometimes) of the pointer r7 in r5,
// so that a fetch leaves r7 and r8 to the units after; what it fetches is accumulated.
ProgramGenerator::Unit ProgramGenerator::atomic_access() {
  Unit u;
  const std::int32_t op = bpf::kAtomicRmwOps[static_cast<std::size_t>(pick(0, 9))];
  const std::uint8_t size = chance(60) ? BPF_DW : BPF_W;
  const int bytes = size == BPF_DW ? 8 : 4;
  int base = kPtr;
  int off = 0;
  switch (pick(0, 5)) {
    case 0:
    case 1:  // a slot of the zeroed area, below the key
      base = 10;
      off = -bytes * pick(24 / bytes, kZeroed / bytes) + (chance(8) ? pick(1, bytes - 1) : 0);
      break;
    case 2:  // the stack at a variable offset: r8, usually masked to whole slots of the area
      u.insns.push_back(mov_x(3, 10));
      u.insns.push_back(add_k(3, -near(kZeroed / 2)));
      u.insns.push_back(mov_x(4, kScalar));
      if (chance(80)) {
        u.insns.push_back(
            make_insn(BPF_ALU64 | BPF_AND | BPF_K, 4, 0, 0, near(kZeroed / 2 - 64) & ~7));
      }
      u.insns.push_back(add_x(3, 4));
      base = 3;
      break;
    case 3:
    case 4: {  // a map value, r7 = the value
      const auto map = static_cast<std::int32_t>(pick(0, 3));
      const int value_size = static_cast<int>(kValueSize[map]);
      lookup(u.insns, map, 0);
      if (chance(95)) exit_if(u, BPF_JEQ, false, 0, 0);
      u.insns.push_back(mov_x(kPtr, 0));
      off = chance(85) ? bytes * pick(0, value_size / bytes - 1) : near(value_size - bytes + 1);
      break;
    }
    default:  // the ctx (refused), or whatever r7 points to
      base = chance(50) ? kCtx : kPtr;
      off = 8 * pick(0, 2);
  }
  u.insns.push_back(mov_x(5, chance(85) ? kScalar : kPtr));
  if (op == BPF_CMPXCHG && chance(90)) {  // r0 the expected value (else what it last held)
    u.insns.push_back(chance(50) ? mov_k(0, pick(-1, 1)) : mov_x(0, kScalar));
  }
  u.insns.push_back(
      make_insn(BPF_STX | BPF_ATOMIC | size, base, 5, static_cast<std::int16_t>(off), op));
  if (op == BPF_CMPXCHG || (op & BPF_FETCH) != 0) {
    Unit acc = accumulate(op == BPF_CMPXCHG ? 0 : 5);
    u.insns.insert(u.insns.end(), acc.insns.begin(), acc.insns.end());
  }
  return u;
}

// A subprogram's body: r1 the caller's argument (a pointer, usually), r2 a copy of the caller's
// r8. It reads or writes through r1 at a constant or an r2 offset, spills r1 to its own stack and
// fills it, calls a helper with a key on its own stack, uses r6 (the caller's is kept), uses its
// stack deeply (the two frames' sum may pass 512 bytes), or returns r1 itself.
std::vector<Insn> ProgramGenerator::subprogram() {
  std::vector<Insn> out;
  out.push_back(mov_k(0, 0));
  switch (pick(0, 7)) {
    case 0:  // a read through r1
      out.push_back(ldx(kSizes[pick(0, 3)], 0, 1, 8 * pick(0, 2)));
      break;
    case 1:  // a write through r1
      out.push_back(st(kSizes[pick(0, 3)], 1, 8 * pick(0, 2), pick(-3, 3)));
      break;
    case 2:  // r1 + r2, r2 masked (usually) to a few slots
      if (chance(80)) out.push_back(make_insn(BPF_ALU64 | BPF_AND | BPF_K, 2, 0, 0, near(24) & ~7));
      out.push_back(add_x(1, 2));
      out.push_back(chance(50) ? ldx(BPF_DW, 0, 1, 0) : stx(BPF_DW, 1, 2, 0));
      break;
    case 3:  // a spill of r1 and its fill, then a read
      out.push_back(stx(BPF_DW, 10, 1, -8 * pick(1, 4)));
      out.push_back(ldx(chance(85) ? BPF_DW : BPF_W, 3, 10, -8 * pick(1, 4)));
      out.push_back(ldx(BPF_DW, 0, 3, 0));
      break;
    case 4: {  // a map lookup with the key on this frame's stack
      out.push_back(st(BPF_W, 10, -4, 0));
      out.push_back(mov_x(2, 10));
      out.push_back(add_k(2, -4));
      lddw_map(out, 1, static_cast<std::int32_t>(pick(0, 3)));
      out.push_back(call(BPF_FUNC_map_lookup_elem));
      out.push_back(make_insn(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1, 0));
      out.push_back(ldx(BPF_B, 0, 0, 0));
      break;
    }
    case 5:  // r6 is this frame's: the caller's must survive
      out.push_back(mov_k(6, pick(-1, 1)));
      out.push_back(mov_x(0, 6));
      break;
    case 6: {  // a deep frame: with the caller's 320 bytes, sometimes past 512
      const int depth = 8 * pick(8, 32);
      out.push_back(st(BPF_DW, 10, -depth, 1));
      out.push_back(ldx(BPF_DW, 0, 10, -depth));
      break;
    }
    default:  // r1 itself returned (a stack pointer is refused)
      out.push_back(mov_x(0, 1));
  }
  out.push_back(make_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
  return out;
}

// A bpf-to-bpf call: r1 a stack pointer of this frame (inside the zeroed area), r7, the ctx, a
// map value after its lookup, or the scalar r8; r2 = r8; the result accumulated.
ProgramGenerator::Unit ProgramGenerator::local_call() {
  Unit u;
  switch (pick(0, 4)) {
    case 0:
    case 1:
      u.insns.push_back(mov_x(1, 10));
      u.insns.push_back(add_k(1, -8 * pick(4, kZeroed / 8)));
      break;
    case 2:
      u.insns.push_back(mov_x(1, chance(50) ? kPtr : kCtx));
      break;
    case 3: {
      lookup(u.insns, static_cast<std::int32_t>(pick(0, 3)), 0);
      if (chance(90)) exit_if(u, BPF_JEQ, false, 0, 0);
      u.insns.push_back(mov_x(1, 0));
      break;
    }
    default:
      u.insns.push_back(mov_x(1, kScalar));
  }
  u.insns.push_back(mov_x(2, kScalar));
  // A call of a subprogram made before in this program (sometimes), or of a new one.
  std::size_t target = subprograms_.size();
  if (!subprograms_.empty() && chance(30)) {
    target = static_cast<std::size_t>(pick(0, static_cast<int>(subprograms_.size()) - 1));
  } else {
    subprograms_.push_back(subprogram());
  }
  u.calls.emplace_back(u.insns.size(), target);
  u.insns.push_back(make_insn(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 0));
  Unit acc = accumulate(0);
  u.insns.insert(u.insns.end(), acc.insns.begin(), acc.insns.end());
  return u;
}

ProgramGenerator::Unit ProgramGenerator::unit() {
  const int kind = pick(0, 99);
  if (kind < 8) return scalar_source();
  if (kind < 20) return bound_scalar();
  if (kind < 28) return scalar_arith();
  if (kind < 40) return ctx_access();
  if (kind < 52) return stack_access();
  if (kind < 72) return map_access();
  if (kind < 82) return spill_fill();
  if (kind < 86) return helper_call();
  if (kind < 91) return atomic_access();
  if (kind < 96) return local_call();
  return bounded_loop();
}

std::vector<Insn> ProgramGenerator::program() {
  subprograms_.clear();
  std::vector<Insn> out;
  out.push_back(mov_x(kCtx, 1));
  // The stack the units use starts zeroed (root may read uninitialized stack, and the JIT's and
  // the interpreter's would differ); r7 and r8 start as a stack pointer and a register.
  for (int off = -8; off >= -kZeroed; off -= 8) out.push_back(st(BPF_DW, 10, off, 0));
  out.push_back(mov_x(kPtr, 10));
  out.push_back(add_k(kPtr, -64));
  out.push_back(ldx(BPF_DW, kScalar, kCtx, 8 * pick(0, 20)));
  std::vector<std::size_t> exits;
  std::vector<std::pair<std::size_t, std::size_t>> calls;
  auto append = [&](const Unit& u) {
    for (std::size_t e : u.to_exit) exits.push_back(out.size() + e);
    for (const auto& [at, target] : u.calls) calls.emplace_back(out.size() + at, target);
    out.insert(out.end(), u.insns.begin(), u.insns.end());
  };
  const int n = pick(1, 7);
  for (int i = 0; i < n; ++i) {
    Unit u = unit();
    // A bounded scalar is what most units want in r8: usually produce one first.
    if (i == 0 && chance(60)) append(bound_scalar());
    append(u);
  }
  const std::size_t epilogue = out.size();
  out.push_back(ldx(BPF_DW, 0, 10, kAccumulator));
  out.push_back(make_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
  for (std::size_t e : exits) out[e].off = static_cast<std::int16_t>(epilogue - e - 1);
  // The subprograms after the main function, each call's imm relative to the next instruction.
  std::vector<std::size_t> starts;
  for (const std::vector<Insn>& sub : subprograms_) {
    starts.push_back(out.size());
    out.insert(out.end(), sub.begin(), sub.end());
  }
  for (const auto& [at, target] : calls) {
    out[at].imm = static_cast<std::int32_t>(starts[target]) - static_cast<std::int32_t>(at) - 1;
  }
  return out;
}

}  // namespace userperf::soundness
