// The x86-64 translation. Register assignment (BPF -> x86-64), chosen so helper arguments are
// already in place (System V: rdi, rsi, rdx, rcx, r8, r9) and r6..r9 live in callee-saved
// registers: r0 rax, r1 rdi, r2 rsi, r3 rdx, r4 rcx, r5 r8, r6 rbx, r7 r13, r8 r14, r9 r15,
// r10 rbp. r9, r10 and r11 are scratch; r12 holds the run's State.
//
// Frames: the entry pushes the callee-saved registers and calls the main function, so `exit` is
// always `ret`. A local call pushes r6..r9 and r10, lowers r10 by kMaxStack and calls; the native
// stack stays 16-byte aligned at every helper call. Errors (fault, budget, call depth, bad helper,
// abort) store a status and unwind to the saved stack pointer of the entry.
//
// Tail calls (unchecked code only): the target's JIT code is entered by a jump to its first
// instruction, in the caller's frame, with the return address of the caller's function still on
// the native stack, so the target's `exit` returns where that function would have: to the entry's
// unwinding, or, from a subprogram, to its caller, as the kernel's x86-64 JIT does. The State's
// per-program words (the helper table, CallContext::statics) become the target's; a local call
// in a program that tail-calls saves and restores them around the call. A target without JIT code
// (its translation failed, or it was loaded for the interpreter) runs there, nested, and its r0
// is returned.
//
// bpf_loop is a native loop around a local call to the callback (whose code an lddw of the
// function names), its state on the native stack; each call is a frame of its own, as in the
// interpreter.
#include "bpf/jit/jit.hpp"

#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bpf/isa/shared_regions.hpp"
#include "bpf/vm/decoded_op.hpp"

namespace userperf::bpf {

namespace {

// What the generated code reads and writes through r12. Standard layout: offsets are baked in.
struct State {
  CallContext call;
  MemoryRegion* call_regions;  // call.regions' storage; [0] is the active stack
  const MemoryRegion* run_regions;
  std::uint64_t run_count;
  const MemoryRegion* static_regions;
  std::uint64_t static_count;
  const MemoryRegion* shared_regions;  // inner maps of map-in-map slots (shared_regions.hpp)
  std::uint64_t shared_count;
  const HelperFn* helpers;
  std::uint64_t helper_count;
  std::uint64_t stack_top;
  std::uint64_t saved_rsp;
  std::uint64_t depth;
  std::uint64_t budget;
  std::uint64_t fault_addr;
  TailCallResolver tail_call;  // set when the program has TAIL_CALL ops
  std::uint64_t tail_r0;       // a target the interpreter ran: its r0
  int tail_calls;              // this run's, MAX_TAIL_CALL_CNT at most
  std::uint32_t pc;
  std::uint32_t status;
};

using EntryFn = std::uint64_t (*)(std::uint64_t r1, std::uint64_t r2, State* state,
                                  std::uint64_t stack_top);

// Checked mode: the interpreter's test of one access. flags: 1 = write, 2 = atomic (aligned).
bool check_access(State* st, std::uint64_t addr, std::uint64_t size, std::uint64_t flags) {
  const bool write = (flags & 1) != 0;
  const std::uint64_t stack_low = st->stack_top - (st->depth + 1) * kMaxStack;
  bool ok = addr >= stack_low && addr <= st->stack_top - size;
  for (std::uint64_t i = 0; !ok && i < st->run_count; ++i)
    ok = st->run_regions[i].allows(addr, size, write);
  for (std::uint64_t i = 0; !ok && i < st->static_count; ++i)
    ok = st->static_regions[i].allows(addr, size, write);
  for (std::uint64_t i = 0; !ok && i < st->shared_count; ++i)
    ok = st->shared_regions[i].allows(addr, size, write);
  if (ok && (flags & 2) != 0 && addr % size != 0) ok = false;
  if (!ok) {
    st->status = static_cast<std::uint32_t>(RunStatus::kFault);
    st->fault_addr = addr;
  }
  return ok;
}

#if defined(__x86_64__)

enum Reg : std::uint8_t {
  RAX = 0,
  RCX = 1,
  RDX = 2,
  RBX = 3,
  RSP = 4,
  RBP = 5,
  RSI = 6,
  RDI = 7,
  R8 = 8,
  R9 = 9,
  R10 = 10,
  R11 = 11,
  R12 = 12,
  R13 = 13,
  R14 = 14,
  R15 = 15,
};

constexpr Reg kMap[kNumRegs] = {RAX, RDI, RSI, RDX, RCX, R8, RBX, R13, R14, R15, RBP};
constexpr Reg kState = R12;

constexpr std::int32_t off_of(std::size_t o) {
  return static_cast<std::int32_t>(o);
}
const std::int32_t kOffPc = off_of(offsetof(State, pc));
const std::int32_t kOffStatus = off_of(offsetof(State, status));
const std::int32_t kOffSavedRsp = off_of(offsetof(State, saved_rsp));
const std::int32_t kOffDepth = off_of(offsetof(State, depth));
const std::int32_t kOffBudget = off_of(offsetof(State, budget));
const std::int32_t kOffCallRegions = off_of(offsetof(State, call_regions));
const std::int32_t kOffHelpers = off_of(offsetof(State, helpers));
const std::int32_t kOffHelperCount = off_of(offsetof(State, helper_count));
const std::int32_t kOffCall = off_of(offsetof(State, call));
const std::int32_t kOffAbort = off_of(offsetof(State, call) + offsetof(CallContext, abort));
const std::int32_t kOffStatics = off_of(offsetof(State, call) + offsetof(CallContext, statics));
const std::int32_t kOffTailR0 = off_of(offsetof(State, tail_r0));
// The words a tail call changes: saved around a local call in a program that tail-calls.
const std::int32_t kPerProgramWords[] = {kOffStatics, kOffStatics + 8, kOffHelpers,
                                         kOffHelperCount};

enum Cond : std::uint8_t {
  kB = 0x2,
  kAE = 0x3,
  kE = 0x4,
  kNE = 0x5,
  kBE = 0x6,
  kA = 0x7,
  kL = 0xc,
  kGE = 0xd,
  kLE = 0xe,
  kG = 0xf,
};

class Emitter {
 public:
  std::vector<std::uint8_t> code;

  void byte(std::uint8_t b) { code.push_back(b); }
  void imm32(std::int32_t v) {
    const auto u = static_cast<std::uint32_t>(v);
    for (int i = 0; i < 4; ++i) byte(static_cast<std::uint8_t>(u >> (8 * i)));
  }
  void imm64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) byte(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::size_t pos() const { return code.size(); }
  void patch32(std::size_t at, std::int32_t v) {
    const auto u = static_cast<std::uint32_t>(v);
    for (int i = 0; i < 4; ++i) code[at + i] = static_cast<std::uint8_t>(u >> (8 * i));
  }

  // REX with W and the high bits of reg/index/base; `force` emits 0x40 even when empty (byte
  // registers sil, dil, spl, bpl).
  void rex(bool w, int reg, int index, int base, bool force = false) {
    std::uint8_t r = 0x40;
    if (w) r |= 8;
    if (reg & 8) r |= 4;
    if (index & 8) r |= 2;
    if (base & 8) r |= 1;
    if (r != 0x40 || force) byte(r);
  }
  void modrm_rr(int reg, int rm) {
    byte(static_cast<std::uint8_t>(0xc0 | ((reg & 7) << 3) | (rm & 7)));
  }
  void modrm_mem(int reg, int base, std::int32_t disp) {
    const bool small = disp >= -128 && disp <= 127;
    byte(static_cast<std::uint8_t>((small ? 0x40 : 0x80) | ((reg & 7) << 3) | (base & 7)));
    if ((base & 7) == 4) byte(0x24);  // SIB: base only (rsp, r12)
    if (small) {
      byte(static_cast<std::uint8_t>(static_cast<std::int8_t>(disp)));
    } else {
      imm32(disp);
    }
  }

  // op r/m, reg (register form)
  void rr(bool w, std::uint8_t op, int reg, int rm, bool force = false) {
    rex(w, reg, 0, rm, force);
    byte(op);
    modrm_rr(reg, rm);
  }
  void rr0f(bool w, std::uint8_t op, int reg, int rm, bool force = false) {
    rex(w, reg, 0, rm, force);
    byte(0x0f);
    byte(op);
    modrm_rr(reg, rm);
  }
  // op reg, [base + disp] or op [base + disp], reg
  void rm(bool w, std::uint8_t op, int reg, int base, std::int32_t disp, bool force = false) {
    rex(w, reg, 0, base, force);
    byte(op);
    modrm_mem(reg, base, disp);
  }
  void rm0f(bool w, std::uint8_t op, int reg, int base, std::int32_t disp) {
    rex(w, reg, 0, base);
    byte(0x0f);
    byte(op);
    modrm_mem(reg, base, disp);
  }

  void mov_rr(bool w, int dst, int src) { rr(w, 0x89, src, dst); }
  void mov_imm64(int dst, std::uint64_t v) {
    if (v <= 0xffffffffu) {  // mov r32, imm32 zero-extends
      rex(false, 0, 0, dst);
      byte(static_cast<std::uint8_t>(0xb8 + (dst & 7)));
      imm32(static_cast<std::int32_t>(static_cast<std::uint32_t>(v)));
    } else if (static_cast<std::int64_t>(v) == static_cast<std::int32_t>(v)) {
      rex(true, 0, 0, dst);
      byte(0xc7);
      modrm_rr(0, dst);
      imm32(static_cast<std::int32_t>(v));
    } else {
      rex(true, 0, 0, dst);
      byte(static_cast<std::uint8_t>(0xb8 + (dst & 7)));
      imm64(v);
    }
  }
  // group-1 op with imm32: ext 0 add, 1 or, 4 and, 5 sub, 6 xor, 7 cmp
  void alu_imm(bool w, int ext, int dst, std::int32_t v) {
    rex(w, 0, 0, dst);
    if (v >= -128 && v <= 127) {
      byte(0x83);
      modrm_rr(ext, dst);
      byte(static_cast<std::uint8_t>(static_cast<std::int8_t>(v)));
    } else {
      byte(0x81);
      modrm_rr(ext, dst);
      imm32(v);
    }
  }
  void mem_imm32(bool w, std::uint8_t op, int ext, int base, std::int32_t disp, std::int32_t v) {
    rex(w, 0, 0, base);
    byte(op);
    modrm_mem(ext, base, disp);
    imm32(v);
  }
  void push(int r) {
    rex(false, 0, 0, r);
    byte(static_cast<std::uint8_t>(0x50 + (r & 7)));
  }
  void pop(int r) {
    rex(false, 0, 0, r);
    byte(static_cast<std::uint8_t>(0x58 + (r & 7)));
  }
  void call_reg(int r) {  // call r
    rex(false, 0, 0, r);
    byte(0xff);
    modrm_rr(2, r);
  }
  void store_state32(std::int32_t off, std::uint32_t v) {  // mov dword [r12 + off], v
    mem_imm32(false, 0xc7, 0, kState, off, static_cast<std::int32_t>(v));
  }
  // jcc/jmp rel32 to a position filled in later; returns where the rel32 is.
  std::size_t jcc(Cond c) {
    byte(0x0f);
    byte(static_cast<std::uint8_t>(0x80 | c));
    const std::size_t at = pos();
    imm32(0);
    return at;
  }
  std::size_t jmp() {
    byte(0xe9);
    const std::size_t at = pos();
    imm32(0);
    return at;
  }
  void bind(std::size_t at, std::size_t target) {
    patch32(at, static_cast<std::int32_t>(static_cast<std::int64_t>(target) -
                                          static_cast<std::int64_t>(at + 4)));
  }
  // a short backward jcc to `target` (a loop)
  void jcc_back(Cond c, std::size_t target) {
    const std::size_t at = jcc(c);
    bind(at, target);
  }
};

enum class Stub : std::uint8_t { kBail, kBudget, kCallDepth, kBadHelper, kAborted, kCount };

// What JIT code does after bpf_tail_call's resolution (tail_call_from_jit): go on after the call
// (index out of range, the 34th call, an empty slot), return the interpreter's r0 (tail_r0) from
// the current function, or stop the run (the interpreter's target stopped: status set); any other
// value is the address of the target's first instruction, to jump to.
enum TailCallNext : std::uint64_t { kTailContinue = 0, kTailReturn = 1, kTailStop = 2 };
std::uint64_t tail_call_from_jit(State* st, std::uint64_t map, std::uint64_t index,
                                 std::uint64_t ctx);

struct Fixup {
  std::size_t at;
  std::uint32_t target;  // instruction index
};

// The seed of one program's blinding keys: from the kernel's random pool; should getrandom fail,
// from the clock and an address (weaker, never fixed).
std::uint64_t blinding_seed() {
  std::uint64_t seed = 0;
  if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == static_cast<ssize_t>(sizeof(seed))) {
    return seed;
  }
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::uint64_t>(now.tv_nsec) * 0x9e3779b97f4a7c15ull ^
         reinterpret_cast<std::uintptr_t>(&seed) ^ static_cast<std::uint64_t>(now.tv_sec);
}

class Translator {
 public:
  Translator(const vm::Program& program, const JitOptions& options)
      : program_(program),
        options_(options),
        key_state_(options.blind_constants ? blinding_seed() : 0) {}

  std::vector<std::uint8_t> translate();
  std::size_t main_offset() const { return insn_pos_.empty() ? 0 : insn_pos_[0]; }

 private:
  const vm::Program& program_;
  const JitOptions& options_;
  Emitter e_;
  bool tail_calls_ = false;  // the program has TAIL_CALL ops
  std::vector<std::size_t> insn_pos_;
  std::vector<Fixup> fixups_;
  std::vector<std::size_t> stub_refs_[static_cast<int>(Stub::kCount)];
  std::uint64_t key_state_;

  // A fresh blinding key (splitmix64 over the per-program seed).
  std::uint64_t next_key() {
    std::uint64_t z = (key_state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Program constants into registers; with blinding, through a random key (jit.hpp). r = the
  // zero extension of v.
  void const32(Reg r, std::uint32_t v);
  // r = v, which is the sign extension of its low 32 bits (a K operand of a 64-bit op).
  void const_sext32(Reg r, std::uint64_t v);
  // r = any 64-bit v (lddw); blinded, r10 holds the key.
  void const64(Reg r, std::uint64_t v);
  // A K operand as its op reads it: 64-bit ops sign-extend, 32-bit ones take the low half.
  void const_k(Reg r, const vm::Op& o, bool w) {
    if (w) return const_sext32(r, o.imm);
    const32(r, static_cast<std::uint32_t>(o.imm));
  }
  bool blind() const { return options_.blind_constants; }

  void to_stub(Stub s, Cond c) { stub_refs_[static_cast<int>(s)].push_back(e_.jcc(c)); }
  void jmp_stub(Stub s) { stub_refs_[static_cast<int>(s)].push_back(e_.jmp()); }
  void set_pc(std::uint32_t i) { e_.store_state32(kOffPc, i); }

  void prologue();
  void op(std::uint32_t i, const vm::Op& o);
  void alu(std::uint32_t i, const vm::Op& o, bool w, int kind, bool x);
  void divmod(const vm::Op& o, bool w, bool is_signed, bool mod, bool x);
  void shift(const vm::Op& o, bool w, int ext, bool x);
  void shift_by(Reg count, Reg d, bool w, int ext);
  void jump(const vm::Op& o, std::uint32_t i, bool w, Cond c, bool x, bool test);
  void check(std::uint32_t i, int base, std::int32_t off, int size, int flags);
  void spend_budget(std::uint32_t i);
  void helper_call(std::uint32_t i, bool indirect, const vm::Op& o);
  void tail_call(std::uint32_t i);
  // A bpf-to-bpf call in a frame of its own: to instruction `target`, or (loop callbacks) to the
  // address at [rsp + `address_slot`] as it was before the call sequence's pushes.
  void local_call(std::uint32_t i, std::uint32_t target, std::int32_t address_slot);
  void loop(std::uint32_t i);
  void atomic(std::uint32_t i, const vm::Op& o);
};

void Translator::const32(Reg r, std::uint32_t v) {
  if (!blind()) return e_.mov_imm64(r, v);
  const auto key = static_cast<std::uint32_t>(next_key());
  e_.rex(false, 0, 0, r);  // mov r32, v ^ key
  e_.byte(static_cast<std::uint8_t>(0xb8 + (r & 7)));
  e_.imm32(static_cast<std::int32_t>(v ^ key));
  e_.rex(false, 0, 0, r);  // xor r32, key
  e_.byte(0x81);
  e_.modrm_rr(6, r);
  e_.imm32(static_cast<std::int32_t>(key));
}

void Translator::const_sext32(Reg r, std::uint64_t v) {
  if (!blind()) return e_.mov_imm64(r, v);
  // sext(a) ^ sext(b) == sext(a ^ b): two sign-extending imm32 forms give sext(low half of v).
  const auto key = static_cast<std::uint32_t>(next_key());
  e_.rex(true, 0, 0, r);  // mov r64, sext(v ^ key)
  e_.byte(0xc7);
  e_.modrm_rr(0, r);
  e_.imm32(static_cast<std::int32_t>(static_cast<std::uint32_t>(v) ^ key));
  e_.rex(true, 0, 0, r);  // xor r64, sext(key)
  e_.byte(0x81);
  e_.modrm_rr(6, r);
  e_.imm32(static_cast<std::int32_t>(key));
}

void Translator::const64(Reg r, std::uint64_t v) {
  if (!blind()) return e_.mov_imm64(r, v);
  const std::uint64_t key = next_key();
  e_.rex(true, 0, 0, r);  // movabs r, v ^ key
  e_.byte(static_cast<std::uint8_t>(0xb8 + (r & 7)));
  e_.imm64(v ^ key);
  e_.rex(true, 0, 0, R10);  // movabs r10, key
  e_.byte(static_cast<std::uint8_t>(0xb8 + (R10 & 7)));
  e_.imm64(key);
  e_.rr(true, 0x31, R10, r);  // xor r, r10
}

void Translator::prologue() {
  for (Reg r : {RBX, RBP, R12, R13, R14, R15}) e_.push(r);
  e_.mov_rr(true, kState, RDX);
  e_.mov_rr(true, RBP, RCX);
  e_.rm(true, 0x89, RSP, kState, kOffSavedRsp);  // mov [r12 + saved_rsp], rsp
  // The interpreter starts r0 and r3..r9 at zero.
  for (Reg r : {RAX, RDX, RCX, R8, RBX, R13, R14, R15}) e_.rr(false, 0x31, r, r);
  // call main; after it returns (exit from the main function) fall into the unwinding.
  e_.byte(0xe8);
  fixups_.push_back({e_.pos(), 0});
  e_.imm32(0);
}

void Translator::check(std::uint32_t i, int base, std::int32_t off, int size, int flags) {
  if (!options_.checked) return;
  set_pc(i);
  e_.rm(true, 0x8d, R11, base, off);  // lea r11, [base + off]
  static constexpr Reg kSaved[] = {RAX, RDI, RSI, RDX, RCX, R8};
  for (Reg r : kSaved) e_.push(r);
  e_.mov_rr(true, RDI, kState);
  e_.mov_rr(true, RSI, R11);
  e_.mov_imm64(RDX, static_cast<std::uint64_t>(size));
  e_.mov_imm64(RCX, static_cast<std::uint64_t>(flags));
  e_.mov_imm64(R11, reinterpret_cast<std::uintptr_t>(&check_access));
  e_.call_reg(R11);
  e_.rr(false, 0x84, RAX, RAX);  // test al, al
  for (int k = 5; k >= 0; --k) e_.pop(kSaved[k]);
  to_stub(Stub::kBail, kE);
}

void Translator::spend_budget(std::uint32_t i) {
  if (!options_.checked || options_.budget == 0) return;
  set_pc(i);
  // sub qword [r12 + budget], 1; jb budget
  e_.rex(true, 0, 0, kState);
  e_.byte(0x83);
  e_.modrm_mem(5, kState, kOffBudget);
  e_.byte(1);
  to_stub(Stub::kBudget, kB);
}

void Translator::alu(std::uint32_t, const vm::Op& o, bool w, int kind, bool x) {
  const Reg d = kMap[o.dst];
  const Reg s = kMap[o.src & 0xf];
  const auto imm = static_cast<std::int32_t>(static_cast<std::uint32_t>(o.imm));
  // kind: 0 add, 1 or, 4 and, 5 sub, 6 xor (group-1 extensions)
  static constexpr std::uint8_t kRegOp[] = {0x01, 0x09, 0, 0, 0x21, 0x29, 0x31};
  if (x) {
    e_.rr(w, kRegOp[kind], s, d);
  } else if (blind()) {
    const_k(R11, o, w);
    e_.rr(w, kRegOp[kind], R11, d);
  } else {
    e_.alu_imm(w, kind, d, imm);
  }
}

void Translator::divmod(const vm::Op& o, bool w, bool is_signed, bool mod, bool x) {
  const Reg d = kMap[o.dst];
  const Reg s = kMap[o.src & 0xf];
  // r11 = divisor, r10 = saved rax, r9 = saved rdx; rax = dividend; result to r11, then dst.
  if (x) {
    e_.mov_rr(w, R11, s);
  } else {
    const_k(R11, o, w);
  }
  e_.mov_rr(true, R10, RAX);
  e_.mov_rr(true, R9, RDX);
  e_.mov_rr(w, RAX, d);  // 32-bit: zero-extends the dividend
  e_.rr(w, 0x85, R11, R11);
  const std::size_t zero = e_.jcc(kE);
  std::size_t minus_one = 0;
  if (is_signed) {
    e_.alu_imm(w, 7, R11, -1);
    minus_one = e_.jcc(kE);
    if (w) e_.byte(0x48);
    e_.byte(0x99);           // cqo / cdq
    e_.rr(w, 0xf7, 7, R11);  // idiv r11
  } else {
    e_.rr(false, 0x31, RDX, RDX);
    e_.rr(w, 0xf7, 6, R11);  // div r11
  }
  e_.mov_rr(true, R11, mod ? RDX : RAX);
  const std::size_t done1 = e_.jmp();
  // divisor 0: div -> 0, mod -> the dividend
  e_.bind(zero, e_.pos());
  if (mod) {
    e_.mov_rr(true, R11, RAX);
  } else {
    e_.rr(false, 0x31, R11, R11);
  }
  std::size_t done2 = 0;
  if (is_signed) {
    done2 = e_.jmp();
    // divisor -1: div -> 0 - dividend, mod -> 0
    e_.bind(minus_one, e_.pos());
    if (mod) {
      e_.rr(false, 0x31, R11, R11);
    } else {
      e_.mov_rr(w, R11, RAX);
      e_.rr(w, 0xf7, 3, R11);  // neg
    }
  }
  e_.bind(done1, e_.pos());
  if (is_signed) e_.bind(done2, e_.pos());
  e_.mov_rr(true, RAX, R10);
  e_.mov_rr(true, RDX, R9);
  e_.mov_rr(w, d, R11);  // 32-bit: zero-extends
}

void Translator::shift(const vm::Op& o, bool w, int ext, bool x) {
  const Reg d = kMap[o.dst];
  const auto count = static_cast<std::uint32_t>(o.imm & (w ? 63 : 31));
  if (!x && blind()) {  // the count through r11, then as a register shift
    const32(R11, count);
    return shift_by(R11, d, w, ext);
  }
  if (!x) {
    e_.rex(w, 0, 0, d);
    e_.byte(0xc1);
    e_.modrm_rr(ext, d);
    e_.byte(static_cast<std::uint8_t>(count));
    return;
  }
  shift_by(kMap[o.src & 0xf], d, w, ext);
}

// d <<= count (ext: 4 shl, 5 shr, 7 sar) with the count in any register: x86 shifts by cl.
void Translator::shift_by(Reg count, Reg d, bool w, int ext) {
  if (count != R11) e_.mov_rr(true, R11, count);
  e_.mov_rr(true, R10, RCX);
  e_.mov_rr(false, RCX, R11);
  const Reg target = d == RCX ? R10 : d;
  e_.rex(w, 0, 0, target);
  e_.byte(0xd3);
  e_.modrm_rr(ext, target);
  e_.mov_rr(true, RCX, R10);
}

void Translator::jump(const vm::Op& o, std::uint32_t i, bool w, Cond c, bool x, bool test) {
  const Reg d = kMap[o.dst];
  const Reg s = kMap[o.src & 0xf];
  const auto imm = static_cast<std::int32_t>(static_cast<std::uint32_t>(o.imm));
  if (!x && blind()) {  // the comparand through r11, then as a register compare
    const_k(R11, o, w);
    e_.rr(w, test ? 0x85 : 0x39, R11, d);
  } else if (test) {
    if (x) {
      e_.rr(w, 0x85, s, d);
    } else {
      e_.rex(w, 0, 0, d);
      e_.byte(0xf7);
      e_.modrm_rr(0, d);
      e_.imm32(imm);
    }
  } else if (x) {
    e_.rr(w, 0x39, s, d);
  } else {
    e_.alu_imm(w, 7, d, imm);
  }
  const auto target = static_cast<std::uint32_t>(o.off);
  if (target <= i && options_.checked && options_.budget != 0) {
    // Taken backward: spend budget first. Invert: skip over when not taken.
    const std::size_t skip = e_.jcc(static_cast<Cond>(c ^ 1));
    spend_budget(i);
    fixups_.push_back({e_.jmp(), target});
    e_.bind(skip, e_.pos());
    return;
  }
  fixups_.push_back({e_.jcc(c), target});
}

void Translator::helper_call(std::uint32_t i, bool indirect, const vm::Op& o) {
  set_pc(i);
  if (!indirect && o.imm == 0) {
    jmp_stub(Stub::kBadHelper);
    return;
  }
  if (indirect) {
    // r11 = helpers[dst] or kBadHelper
    e_.mov_rr(true, R11, kMap[o.dst]);
    e_.rm(true, 0x3b, R11, kState, kOffHelperCount);  // cmp r11, [r12 + helper_count]
    to_stub(Stub::kBadHelper, kAE);
    e_.rm(true, 0x8b, R10, kState, kOffHelpers);  // mov r10, [r12 + helpers]
    e_.byte(0x4f);                                // mov r11, [r10 + r11 * 8]
    e_.byte(0x8b);
    e_.byte(0x1c);
    e_.byte(0xda);
    e_.rr(true, 0x85, R11, R11);
    to_stub(Stub::kBadHelper, kE);
    e_.mov_rr(true, R9, R11);  // the target, kept across the region update
  } else {
    e_.mov_imm64(R9, o.imm);
  }
  static constexpr Reg kArgs[] = {RDI, RSI, RDX, RCX, R8};
  if (options_.checked) {  // the interpreter keeps r1..r5 across a call
    for (Reg r : kArgs) e_.push(r);
    e_.alu_imm(true, 5, RSP, 8);
  }
  // call_regions[0].begin = r10 - kMaxStack (the active frames); abort = false
  e_.rm(true, 0x8b, R11, kState, kOffCallRegions);
  e_.rm(true, 0x8d, R10, RBP, -kMaxStack);
  e_.rm(true, 0x89, R10, R11, off_of(offsetof(MemoryRegion, begin)));
  e_.rex(false, 0, 0, kState);  // mov byte [r12 + abort], 0
  e_.byte(0xc6);
  e_.modrm_mem(0, kState, kOffAbort);
  e_.byte(0);
  e_.mov_rr(true, R11, R9);
  e_.rm(true, 0x8d, R9, kState, kOffCall);  // r9 = &state->call
  e_.call_reg(R11);
  if (options_.checked) {
    e_.alu_imm(true, 0, RSP, 8);
    for (int k = 4; k >= 0; --k) e_.pop(kArgs[k]);
  }
  // cmp byte [r12 + abort], 0; jne aborted
  e_.rex(false, 0, 0, kState);
  e_.byte(0x80);
  e_.modrm_mem(7, kState, kOffAbort);
  e_.byte(0);
  to_stub(Stub::kAborted, kNE);
}

void Translator::local_call(std::uint32_t i, std::uint32_t target, std::int32_t address_slot) {
  spend_budget(i);
  set_pc(i);
  // cmp qword [r12 + depth], kMaxCallFrames - 1; jae call depth
  e_.rex(true, 0, 0, kState);
  e_.byte(0x83);
  e_.modrm_mem(7, kState, kOffDepth);
  e_.byte(kMaxCallFrames - 1);
  to_stub(Stub::kCallDepth, kAE);
  e_.rex(true, 0, 0, kState);  // inc qword [r12 + depth]
  e_.byte(0xff);
  e_.modrm_mem(0, kState, kOffDepth);
  std::int32_t pushed = 0;
  if (tail_calls_) {  // push qword [r12 + word]: a tail call in the callee changes them
    for (std::int32_t word : kPerProgramWords) e_.rm(false, 0xff, 6, kState, word);
    pushed += 32;
  }
  for (Reg r : {RBX, R13, R14, R15, RBP}) e_.push(r);
  pushed += 40;
  e_.alu_imm(true, 5, RBP, kMaxStack);
  if (address_slot < 0) {
    e_.byte(0xe8);
    fixups_.push_back({e_.pos(), target});
    e_.imm32(0);
  } else {
    e_.rm(false, 0xff, 2, RSP, address_slot + pushed);  // call qword [rsp + slot]
  }
  for (Reg r : {RBP, R15, R14, R13, RBX}) e_.pop(r);
  if (tail_calls_) {  // pop qword [r12 + word], in reverse
    for (int w = 3; w >= 0; --w) e_.rm(false, 0x8f, 0, kState, kPerProgramWords[w]);
  }
  e_.rex(true, 0, 0, kState);  // dec qword [r12 + depth]
  e_.byte(0xff);
  e_.modrm_mem(1, kState, kOffDepth);
}

void Translator::loop(std::uint32_t i) {
  // bpf_loop(nr_loops = r1, callback = r2, ctx = r3, flags = r4), as the interpreter's op_LOOP:
  // flags first (-EINVAL), then the u32 count (-E2BIG past kMaxLoops; 0: no call), then the
  // callback, which must be a function an lddw named (its instruction index is in r2: anything
  // else stops the run with kBadHelper); each call gets r1 = the index, r2 = ctx, r3..r5 = 0, in a
  // frame of its own; a non-zero return stops; r0 = the calls made.
  std::vector<std::size_t> to_end;
  e_.rr(true, 0x85, RCX, RCX);  // test rcx, rcx
  const std::size_t flags_ok = e_.jcc(kE);
  e_.mov_imm64(RAX, static_cast<std::uint64_t>(-static_cast<std::int64_t>(EINVAL)));
  to_end.push_back(e_.jmp());
  e_.bind(flags_ok, e_.pos());
  e_.mov_rr(false, RDI, RDI);  // the count is a u32
  e_.alu_imm(true, 7, RDI, static_cast<std::int32_t>(kMaxLoops));
  const std::size_t count_ok = e_.jcc(kBE);
  e_.mov_imm64(RAX, static_cast<std::uint64_t>(-static_cast<std::int64_t>(E2BIG)));
  to_end.push_back(e_.jmp());
  e_.bind(count_ok, e_.pos());
  e_.rr(true, 0x85, RDI, RDI);
  const std::size_t some = e_.jcc(kNE);
  e_.rr(false, 0x31, RAX, RAX);  // no loop: r0 = 0
  to_end.push_back(e_.jmp());
  e_.bind(some, e_.pos());
  // r11 = the callback's code: compare r2 with each function an lddw named.
  std::vector<std::size_t> found;
  std::vector<std::uint32_t> targets;
  for (std::uint32_t callback : program_.callbacks) {
    e_.alu_imm(true, 7, RSI, static_cast<std::int32_t>(callback));
    const std::size_t other = e_.jcc(kNE);
    e_.rex(true, R11, 0, 0);  // lea r11, [rip + the callback's first instruction]
    e_.byte(0x8d);
    e_.byte(0x1d);
    fixups_.push_back({e_.pos(), callback});
    e_.imm32(0);
    found.push_back(e_.jmp());
    e_.bind(other, e_.pos());
  }
  set_pc(i);
  jmp_stub(Stub::kBadHelper);
  for (std::size_t at : found) e_.bind(at, e_.pos());
  // The loop's state on the native stack (32 bytes keep it 16-byte aligned): [rsp] the index,
  // [rsp + 8] ctx, [rsp + 16] the count, [rsp + 24] the callback.
  e_.push(R11);
  e_.push(RDI);
  e_.push(RDX);
  e_.byte(0x6a);  // push 0
  e_.byte(0);
  const std::size_t top = e_.pos();
  e_.rm(true, 0x8b, RDI, RSP, 0);  // r1 = index
  e_.rm(true, 0x8b, RSI, RSP, 8);  // r2 = ctx
  for (Reg r : {RDX, RCX, R8}) e_.rr(false, 0x31, r, r);
  local_call(i, 0, 24);
  e_.rm(true, 0x8b, R11, RSP, 0);  // ++index
  e_.alu_imm(true, 0, R11, 1);
  e_.rm(true, 0x89, R11, RSP, 0);
  e_.rr(true, 0x85, RAX, RAX);  // a non-zero return stops
  const std::size_t stopped = e_.jcc(kNE);
  e_.rm(true, 0x3b, R11, RSP, 16);  // cmp r11, count
  e_.jcc_back(kB, top);
  e_.bind(stopped, e_.pos());
  e_.mov_rr(true, RAX, R11);  // r0 = the calls made
  e_.alu_imm(true, 0, RSP, 32);
  for (std::size_t at : to_end) e_.bind(at, e_.pos());
}

void Translator::tail_call(std::uint32_t i) {
  set_pc(i);
  // Every BPF register survives a call that goes on (as in the interpreter): r0..r5 are saved
  // around the resolution (six pushes keep the stack 16-byte aligned).
  static constexpr Reg kSaved[] = {RAX, RDI, RSI, RDX, RCX, R8};
  for (Reg r : kSaved) e_.push(r);
  e_.mov_rr(true, RCX, RDI);  // ctx = r1; map = r2 (rsi) and index = r3 (rdx) are in place
  e_.mov_rr(true, RDI, kState);
  e_.mov_imm64(R11, reinterpret_cast<std::uintptr_t>(&tail_call_from_jit));
  e_.call_reg(R11);
  e_.mov_rr(true, R11, RAX);
  for (int k = 5; k >= 0; --k) e_.pop(kSaved[k]);
  e_.alu_imm(true, 7, R11, kTailStop);  // cmp r11, kTailStop
  const std::size_t go_on = e_.jcc(kB);
  const std::size_t jump = e_.jcc(kA);
  e_.rm(true, 0x8b, RAX, kState, kOffTailR0);  // kTailStop: r0 as the target stopped, status set
  jmp_stub(Stub::kBail);
  e_.bind(jump, e_.pos());  // jmp r11: the target's first instruction, in this frame
  e_.rex(false, 0, 0, R11);
  e_.byte(0xff);
  e_.modrm_rr(4, R11);
  e_.bind(go_on, e_.pos());  // kTailReturn or kTailContinue
  e_.alu_imm(true, 7, R11, kTailReturn);
  const std::size_t after = e_.jcc(kNE);
  e_.rm(true, 0x8b, RAX, kState, kOffTailR0);
  e_.byte(0xc3);  // ret: the interpreter's r0 is this function's
  e_.bind(after, e_.pos());
}

void Translator::atomic(std::uint32_t i, const vm::Op& o) {
  using K = vm::OpKind;
  const int k = static_cast<int>(o.kind);
  const bool w = k >= static_cast<int>(K::ATOMIC_ADD64);
  const int index = k - static_cast<int>(w ? K::ATOMIC_ADD64 : K::ATOMIC_ADD32);
  const Reg d = kMap[o.dst];
  const Reg s = kMap[o.src & 0xf];
  const std::int32_t off = o.off;
  check(i, d, off, w ? 8 : 4, 3);
  static constexpr std::uint8_t kLockOp[] = {0x01, 0x09, 0x21, 0x31};  // add or and xor
  if (index < 4) {                                                     // lock op [d + off], s
    e_.byte(0xf0);
    e_.rm(w, kLockOp[index], s, d, off);
    return;
  }
  if (index == 4) {  // fetch add: lock xadd
    e_.mov_rr(true, R11, s);
    e_.byte(0xf0);
    e_.rex(w, R11, 0, d);
    e_.byte(0x0f);
    e_.byte(0xc1);
    e_.modrm_mem(R11, d, off);
    e_.mov_rr(true, s, R11);
    return;
  }
  if (index < 8) {                  // fetch or/and/xor: a cmpxchg loop
    e_.rm(true, 0x8d, R9, d, off);  // r9 = address
    e_.mov_rr(true, R10, s);        // r10 = operand
    e_.push(RAX);
    e_.rm(w, 0x8b, RAX, R9, 0);  // rax = old
    const std::size_t loop = e_.pos();
    e_.mov_rr(true, R11, RAX);
    e_.rr(w, kLockOp[index - 4], R10, R11);
    e_.byte(0xf0);
    e_.rex(w, R11, 0, R9);
    e_.byte(0x0f);
    e_.byte(0xb1);
    e_.modrm_mem(R11, R9, 0);
    e_.jcc_back(kNE, loop);
    e_.mov_rr(w, R11, RAX);  // 32-bit: zero-extends
    e_.pop(RAX);
    e_.mov_rr(true, s, R11);
    return;
  }
  if (index == 8) {  // xchg (locked implicitly)
    e_.mov_rr(true, R11, s);
    e_.rm(w, 0x87, R11, d, off);
    if (!w) e_.mov_rr(false, R11, R11);
    e_.mov_rr(true, s, R11);
    return;
  }
  // cmpxchg: compares with r0 (rax); r0 = the old value either way
  e_.byte(0xf0);
  e_.rex(w, s, 0, d);
  e_.byte(0x0f);
  e_.byte(0xb1);
  e_.modrm_mem(s, d, off);
  if (!w) e_.mov_rr(false, RAX, RAX);  // 32-bit success leaves rax's high half: zero it
}

void Translator::op(std::uint32_t i, const vm::Op& o) {
  using K = vm::OpKind;
  const Reg d = kMap[o.dst];
  const Reg s = kMap[o.src & 0xf];
  const int k = static_cast<int>(o.kind);
  // ALU: 31 kinds per width, 64-bit first.
  constexpr int kAlu64 = static_cast<int>(K::ADD64_K);
  constexpr int kAlu32 = static_cast<int>(K::ADD32_K);
  if (k >= kAlu64 && k < kAlu32 + (kAlu32 - kAlu64)) {
    const bool w = k < kAlu32;
    const auto base = static_cast<K>(k - (w ? kAlu64 : kAlu32) + kAlu64);  // as a 64-bit kind
    // K/X pairs, but NEG (one kind) shifts the pairs after it by one; MOVSX8/16 by two.
    const int rel = static_cast<int>(base) - kAlu64;
    const bool x = base > K::NEG64 ? rel % 2 == 0 : rel % 2 == 1;
    switch (base) {
      case K::ADD64_K:
      case K::ADD64_X:
        return alu(i, o, w, 0, x);
      case K::SUB64_K:
      case K::SUB64_X:
        return alu(i, o, w, 5, x);
      case K::OR64_K:
      case K::OR64_X:
        return alu(i, o, w, 1, x);
      case K::AND64_K:
      case K::AND64_X:
        return alu(i, o, w, 4, x);
      case K::XOR64_K:
      case K::XOR64_X:
        return alu(i, o, w, 6, x);
      case K::MUL64_K:
        if (blind()) {
          const_k(R11, o, w);
          return e_.rr0f(w, 0xaf, d, R11);
        }
        e_.rex(w, d, 0, d);
        e_.byte(0x69);
        e_.modrm_rr(d, d);
        e_.imm32(static_cast<std::int32_t>(static_cast<std::uint32_t>(o.imm)));
        return;
      case K::MUL64_X:
        return e_.rr0f(w, 0xaf, d, s);
      case K::DIV64_K:
      case K::DIV64_X:
        return divmod(o, w, false, false, x);
      case K::SDIV64_K:
      case K::SDIV64_X:
        return divmod(o, w, true, false, x);
      case K::MOD64_K:
      case K::MOD64_X:
        return divmod(o, w, false, true, x);
      case K::SMOD64_K:
      case K::SMOD64_X:
        return divmod(o, w, true, true, x);
      case K::LSH64_K:
      case K::LSH64_X:
        return shift(o, w, 4, x);
      case K::RSH64_K:
      case K::RSH64_X:
        return shift(o, w, 5, x);
      case K::ARSH64_K:
      case K::ARSH64_X:
        return shift(o, w, 7, x);
      case K::NEG64:
        return e_.rr(w, 0xf7, 3, d);
      case K::MOV64_K:
        return const_k(d, o, w);
      case K::MOV64_X:
        return e_.mov_rr(w, d, s);
      case K::MOVSX8_64:  // movsx r, r/m8 (REX for sil/dil)
        return e_.rr0f(w, 0xbe, d, s, true);
      case K::MOVSX16_64:
        if (w) return e_.rr0f(true, 0xbf, d, s);
        e_.rr0f(false, 0xbf, d, s);
        return;
      default:
        return;
    }
  }
  switch (o.kind) {
    case K::MOVSX32_64:
      return e_.rr(true, 0x63, d, s);  // movsxd
    case K::LE16:
      return e_.rr0f(false, 0xb7, d, d);  // movzx r32, r16
    case K::LE32:
      return e_.mov_rr(false, d, d);
    case K::LE64:
      return;
    case K::BE16:
    case K::BSWAP16:
      e_.byte(0x66);  // rol r16, 8
      e_.rex(false, 0, 0, d);
      e_.byte(0xc1);
      e_.modrm_rr(0, d);
      e_.byte(8);
      return e_.rr0f(false, 0xb7, d, d);
    case K::BE32:
    case K::BSWAP32:
      e_.rex(false, 0, 0, d);
      e_.byte(0x0f);
      e_.byte(static_cast<std::uint8_t>(0xc8 + (d & 7)));
      return;
    case K::BE64:
    case K::BSWAP64:
      e_.rex(true, 0, 0, d);
      e_.byte(0x0f);
      e_.byte(static_cast<std::uint8_t>(0xc8 + (d & 7)));
      return;
    case K::JA:
      if (static_cast<std::uint32_t>(o.off) <= i) spend_budget(i);
      fixups_.push_back({e_.jmp(), static_cast<std::uint32_t>(o.off)});
      return;
    case K::CALL_HELPER:
      return helper_call(i, false, o);
    case K::CALLX:
      return helper_call(i, true, o);
    case K::CALL_LOCAL:
      return local_call(i, static_cast<std::uint32_t>(o.off), -1);
    case K::EXIT:
      e_.byte(0xc3);
      return;
    case K::TAIL_CALL:
      return tail_call(i);
    case K::LOOP:
      return loop(i);
    case K::LDDW:
      return const64(d, o.imm);
    case K::LDXB:
      check(i, s, o.off, 1, 0);
      return e_.rm0f(false, 0xb6, d, s, o.off);
    case K::LDXH:
      check(i, s, o.off, 2, 0);
      return e_.rm0f(false, 0xb7, d, s, o.off);
    case K::LDXW:
      check(i, s, o.off, 4, 0);
      return e_.rm(false, 0x8b, d, s, o.off);
    case K::LDXDW:
      check(i, s, o.off, 8, 0);
      return e_.rm(true, 0x8b, d, s, o.off);
    case K::LDXSB:
      check(i, s, o.off, 1, 0);
      return e_.rm0f(true, 0xbe, d, s, o.off);
    case K::LDXSH:
      check(i, s, o.off, 2, 0);
      return e_.rm0f(true, 0xbf, d, s, o.off);
    case K::LDXSW:
      check(i, s, o.off, 4, 0);
      return e_.rm(true, 0x63, d, s, o.off);
    case K::STB:
      check(i, d, o.off, 1, 1);
      if (blind()) {  // the value through r11: mov [d + off], r11b
        const32(R11, static_cast<std::uint8_t>(o.imm));
        return e_.rm(false, 0x88, R11, d, o.off);
      }
      e_.rm(false, 0xc6, 0, d, o.off);
      e_.byte(static_cast<std::uint8_t>(o.imm));
      return;
    case K::STH:
      check(i, d, o.off, 2, 1);
      if (blind()) {
        const32(R11, static_cast<std::uint16_t>(o.imm));
        e_.byte(0x66);
        return e_.rm(false, 0x89, R11, d, o.off);
      }
      e_.byte(0x66);
      e_.rm(false, 0xc7, 0, d, o.off);
      e_.byte(static_cast<std::uint8_t>(o.imm));
      e_.byte(static_cast<std::uint8_t>(o.imm >> 8));
      return;
    case K::STW:
    case K::STDW:
      check(i, d, o.off, o.kind == K::STW ? 4 : 8, 1);
      if (blind()) {
        const_k(R11, o, o.kind == K::STDW);
        return e_.rm(o.kind == K::STDW, 0x89, R11, d, o.off);
      }
      e_.mem_imm32(o.kind == K::STDW, 0xc7, 0, d, o.off,
                   static_cast<std::int32_t>(static_cast<std::uint32_t>(o.imm)));
      return;
    case K::STXB:
      check(i, d, o.off, 1, 1);
      return e_.rm(false, 0x88, s, d, o.off, true);
    case K::STXH:
      check(i, d, o.off, 2, 1);
      e_.byte(0x66);
      return e_.rm(false, 0x89, s, d, o.off);
    case K::STXW:
      check(i, d, o.off, 4, 1);
      return e_.rm(false, 0x89, s, d, o.off);
    case K::STXDW:
      check(i, d, o.off, 8, 1);
      return e_.rm(true, 0x89, s, d, o.off);
    default:
      break;
  }
  constexpr int kJmp64 = static_cast<int>(K::JEQ64_K);
  constexpr int kJmp32 = static_cast<int>(K::JEQ32_K);
  if (k >= kJmp64 && k < kJmp32 + (kJmp32 - kJmp64)) {
    const bool w = k < kJmp32;
    const int rel = k - (w ? kJmp64 : kJmp32);
    const bool x = rel % 2 == 1;
    // JEQ JGT JGE JSET JNE JSGT JSGE JLT JLE JSLT JSLE
    static constexpr Cond kConds[] = {kE, kA, kAE, kNE, kNE, kG, kGE, kB, kBE, kL, kLE};
    return jump(o, i, w, kConds[rel / 2], x, rel / 2 == 3);
  }
  return atomic(i, o);
}

std::vector<std::uint8_t> Translator::translate() {
  const std::size_t n = program_.ops.size();
  insn_pos_.assign(n, 0);
  for (const vm::Op& o : program_.ops) tail_calls_ = tail_calls_ || o.kind == vm::OpKind::TAIL_CALL;
  prologue();
  // Falls here when main returns: status kOk (zero) and rax = r0.
  const std::size_t after_main = e_.jmp();
  for (std::size_t i = 0; i < n; ++i) {
    insn_pos_[i] = e_.pos();
    // lddw's second slot: nothing to emit.
    if (i > 0 && program_.ops[i - 1].kind == vm::OpKind::LDDW) continue;
    op(static_cast<std::uint32_t>(i), program_.ops[i]);
  }
  // Stubs: status, then the unwinding shared with the normal end.
  std::size_t stub_pos[static_cast<int>(Stub::kCount)] = {};
  for (Stub s : {Stub::kBudget, Stub::kCallDepth, Stub::kBadHelper, Stub::kAborted}) {
    stub_pos[static_cast<int>(s)] = e_.pos();
    RunStatus status = s == Stub::kBudget      ? RunStatus::kBudget
                       : s == Stub::kCallDepth ? RunStatus::kCallDepth
                       : s == Stub::kBadHelper ? RunStatus::kBadHelper
                                               : RunStatus::kAborted;
    e_.store_state32(kOffStatus, static_cast<std::uint32_t>(status));
    stub_refs_[static_cast<int>(Stub::kBail)].push_back(e_.jmp());
  }
  const std::size_t bail = e_.pos();
  stub_pos[static_cast<int>(Stub::kBail)] = bail;
  e_.bind(after_main, bail);
  e_.rm(true, 0x8b, RSP, kState, kOffSavedRsp);  // mov rsp, [r12 + saved_rsp]
  for (Reg r : {R15, R14, R13, R12, RBP, RBX}) e_.pop(r);
  e_.byte(0xc3);
  for (int s = 0; s < static_cast<int>(Stub::kCount); ++s) {
    for (std::size_t at : stub_refs_[s]) e_.bind(at, stub_pos[s]);
  }
  for (const Fixup& f : fixups_) e_.bind(f.at, insn_pos_[f.target]);
  return std::move(e_.code);
}

#endif  // __x86_64__

}  // namespace

bool jit_supported() {
#if defined(__x86_64__)
  return true;
#else
  return false;
#endif
}

bool jit_allowed_by_environment() {
  static const bool allowed = [] {
    const char* v = std::getenv("USERPERF_BPF_JIT");
    return !(v != nullptr && std::strcmp(v, "0") == 0);
  }();
  return allowed;
}

struct Jit::Impl {
  vm::Program program;
  JitOptions options;
  void* code = nullptr;
  std::size_t mapped = 0;
  std::size_t code_size = 0;
  std::size_t main_offset = 0;  // the first instruction's code: where a tail call jumps
  ~Impl() {
    if (code != nullptr) munmap(code, mapped);
  }
};

const Jit::Impl& JitTailCall::of(const Jit& jit) {
  return *jit.impl_;
}

namespace {

#if defined(__x86_64__)
std::uint64_t tail_call_from_jit(State* st, std::uint64_t map, std::uint64_t index,
                                 std::uint64_t ctx) {
  // As the interpreter's op_TAIL_CALL: the index, then the count, then the slot.
  const TailCallSlot slot = st->tail_call(map, static_cast<std::uint32_t>(index));
  if (!slot.in_range || st->tail_calls >= kMaxTailCalls) return kTailContinue;
  ++st->tail_calls;
  if (slot.target == nullptr) return kTailContinue;
  if (slot.jit != nullptr) {
    const auto& target = JitTailCall::of(*slot.jit);
    st->call.statics = target.program.static_regions;
    st->helpers = target.program.helpers.data();
    st->helper_count = target.program.helpers.size();
    return reinterpret_cast<std::uintptr_t>(target.code) + target.main_offset;
  }
  // Only the interpreter runs the target: there, nested, with this run's regions and count.
  const RunResult result = vm::execute(
      vm::program_of(*slot.target), ctx, map,
      std::span<const MemoryRegion>(st->run_regions, st->run_count), st->call.env, &st->tail_calls);
  st->tail_r0 = result.r0;
  if (result.status == RunStatus::kOk) return kTailReturn;
  st->status = static_cast<std::uint32_t>(result.status);
  st->pc = result.pc;
  st->fault_addr = result.fault_addr;
  return kTailStop;
}
#endif

}  // namespace

Jit::Jit() : impl_(std::make_unique<Impl>()) {}
Jit::~Jit() = default;

Expected<std::unique_ptr<Jit>> Jit::load(std::span<const Insn> insns, JitOptions options) {
#if !defined(__x86_64__)
  (void)insns;
  (void)options;
  return make_error(ENOTSUP, "the eBPF JIT supports x86-64 only");
#else
  InterpreterOptions vm_options;
  vm_options.helpers = options.helpers;
  vm_options.static_regions = options.static_regions;
  vm_options.tail_call = options.tail_call;
  auto program = vm::decode(insns, std::move(vm_options));
  if (!program) return program.error();
  if (options.checked && options.tail_call != nullptr) {
    return make_error(ENOTSUP, "tail calls are JIT-compiled for verified programs only");
  }
  std::unique_ptr<Jit> jit(new Jit());
  Impl& impl = *jit->impl_;
  impl.program = std::move(*program);
  impl.options = std::move(options);
  Translator translator(impl.program, impl.options);
  std::vector<std::uint8_t> code = translator.translate();
  impl.main_offset = translator.main_offset();
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t mapped = (code.size() + page - 1) / page * page;
  void* mem = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return make_error(errno, "mmap for JIT code");
  std::memcpy(mem, code.data(), code.size());
  if (mprotect(mem, mapped, PROT_READ | PROT_EXEC) != 0) {
    const int err = errno;
    munmap(mem, mapped);
    return make_error(err, "mprotect of JIT code to read+exec");
  }
  impl.code = mem;
  impl.mapped = mapped;
  impl.code_size = code.size();
  return jit;
#endif
}

RunResult Jit::run(std::uint64_t r1, std::uint64_t r2, std::span<const MemoryRegion> regions,
                   void* env) const {
  const Impl& impl = *impl_;
  alignas(16) std::uint8_t stack[kMaxCallFrames * kMaxStack];
  const std::uint64_t stack_top = reinterpret_cast<std::uintptr_t>(stack) + sizeof(stack);
  // Helpers see the run's regions (the active stack first, then run()'s) and the program's statics:
  // built only when the program can call one, as the interpreter does.
  MemoryRegion* call_regions = nullptr;
  std::size_t count = 0;
  // Checked code's access test also admits the inner maps' values (helpers look there
  // themselves: CallContext::may_access).
  const std::span<const MemoryRegion> shared =
      impl.options.checked ? shared_regions() : std::span<const MemoryRegion>();
  if (impl.program.calls_helpers) {
    count = 1 + regions.size();
    call_regions = static_cast<MemoryRegion*>(__builtin_alloca(count * sizeof(MemoryRegion)));
    call_regions[0] = MemoryRegion{stack_top - kMaxStack, stack_top, true};
    std::size_t n = 1;
    for (const MemoryRegion& r : regions) call_regions[n++] = r;
  }

  // Every field set one by one: `State st{}` compiled to a `rep stos`, 40% of run()'s time on the
  // overflow path (perf annotate of bench_bpf_handler).
  State st;
  st.call.env = env;
  st.call.regions = std::span<const MemoryRegion>(call_regions, count);
  st.call.statics = impl.program.static_regions;
  st.call.abort = false;
  st.call_regions = call_regions;
  st.run_regions = regions.data();
  st.run_count = regions.size();
  st.static_regions = impl.program.static_regions.data();
  st.static_count = impl.program.static_regions.size();
  st.shared_regions = shared.data();
  st.shared_count = shared.size();
  st.helpers = impl.program.helpers.data();
  st.helper_count = impl.program.helpers.size();
  st.stack_top = stack_top;
  st.saved_rsp = 0;
  st.depth = 0;
  st.budget = impl.options.budget;
  st.fault_addr = 0;
  st.tail_call = impl.program.tail_call;
  st.tail_r0 = 0;
  st.tail_calls = 0;
  st.pc = 0;
  st.status = static_cast<std::uint32_t>(RunStatus::kOk);
  const auto entry = reinterpret_cast<EntryFn>(impl.code);
  const std::uint64_t r0 = entry(r1, r2, &st, stack_top);
  const auto status = static_cast<RunStatus>(st.status);
  return RunResult{status, r0, status == RunStatus::kOk ? 0 : st.pc,
                   status == RunStatus::kFault ? st.fault_addr : 0};
}

std::size_t Jit::size() const {
  return impl_->program.ops.size();
}

std::size_t Jit::code_size() const {
  return impl_->code_size;
}

std::span<const std::uint8_t> Jit::code() const {
  return {static_cast<const std::uint8_t*>(impl_->code), impl_->code_size};
}

}  // namespace userperf::bpf
