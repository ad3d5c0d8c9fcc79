// The x86-64 translation. Register assignment (BPF -> x86-64), chosen so helper arguments are
// already in place (System V: rdi, rsi, rdx, rcx, r8, r9) and r6..r9 live in callee-saved
// registers: r0 rax, r1 rdi, r2 rsi, r3 rdx, r4 rcx, r5 r8, r6 rbx, r7 r13, r8 r14, r9 r15,
// r10 rbp. r9, r10 and r11 are scratch; r12 holds the run's State.
//
// Leaf programs (unchecked, calling no helper, no local function, no bpf_loop, no tail call: the
// verifier proved every access, and nothing else can fail) have an entry of their own
// (leaf_prologue, a LeafFn): `run()` calls it with r1 and r2 only (no State: r12 is not touched)
// and reads r0.
//
// Frames: the entry pushes the callee-saved registers and calls the main function, so `exit` is
// always `ret`. A local call pushes r6..r9 and r10, lowers r10 by the caller's frame size
// (frames.hpp) and calls; the native
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
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bpf/jit/frames.hpp"
#include "bpf/jit/jit.hpp"
#include "bpf/jit/jit_state.hpp"
#include "bpf/jit/x86_emitter.hpp"
#include "bpf/vm/decoded_op.hpp"

namespace userperf::bpf::x86jit {

// BPF registers in x86-64 ones (the header comment), and the State's fields as r12 offsets.
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

// The constant pool starts at the first page boundary after the code, so that it can be mapped
// without execute permission (x86-64 pages are 4 KiB; jit.cpp checks).
inline constexpr std::size_t kPoolAlign = 4096;

struct Fixup {
  std::size_t at;
  std::uint32_t target;  // instruction index
};

class Translator {
 public:
  Translator(const vm::Program& program, const JitOptions& options, const Frames& frames);

  std::vector<std::uint8_t> translate();
  // After translate(): the blinded constants (JitOptions::blind_constants), 8 bytes each, which
  // the code reads RIP-relative at pool_offset() from its start: the caller maps them there,
  // read-only and not executable.
  const std::vector<std::uint64_t>& pool() const { return pool_; }
  std::size_t pool_offset() const { return pool_offset_; }
  std::size_t main_offset() const { return insn_pos_.empty() ? 0 : insn_pos_[0]; }
  // After translate(): the code is a leaf (leaf_prologue()).
  bool leaf() const { return leaf_; }

 private:
  const vm::Program& program_;
  const JitOptions& options_;
  const Frames& frames_;
  Emitter e_;
  bool tail_calls_ = false;  // the program has TAIL_CALL ops
  bool leaf_ = false;        // unchecked; no helper, local call, loop, tail call or probe load
  std::vector<std::size_t> insn_pos_;
  std::vector<Fixup> fixups_;
  std::vector<std::size_t> stub_refs_[static_cast<int>(Stub::kCount)];
  std::vector<std::uint64_t> pool_;  // distinct blinded constants
  struct PoolRef {
    std::size_t at;       // a load's disp32
    std::uint32_t entry;  // its pool_ index
  };
  std::vector<PoolRef> pool_refs_;
  std::size_t pool_offset_ = 0;

  // `op reg, [rip + disp32]` on pool entry v (its low 4 bytes when !w), bound by translate();
  // two_byte: a 0x0f-prefixed opcode.
  void pool_op(bool w, std::uint8_t op, Reg reg, std::uint64_t v, bool two_byte = false);
  // r = v from the constant pool: mov r, [rip + disp32].
  void pool_load(Reg r, std::uint64_t v) { pool_op(true, 0x8b, r, v); }
  // A K operand's value as its op reads it (below), for the pool.
  static std::uint64_t k_value(const vm::Op& o, bool w) {
    return w ? o.imm : static_cast<std::uint32_t>(o.imm);
  }
  // Program constants into registers; blinded, loaded from the pool (jit.hpp). r = the zero
  // extension of v.
  void const32(Reg r, std::uint32_t v);
  // r = v, which is the sign extension of its low 32 bits (a K operand of a 64-bit op).
  void const_sext32(Reg r, std::uint64_t v);
  // r = any 64-bit v (lddw).
  void const64(Reg r, std::uint64_t v);
  // A K operand as its op reads it: 64-bit ops sign-extend, 32-bit ones take the low half.
  void const_k(Reg r, const vm::Op& o, bool w) {
    if (w) return const_sext32(r, o.imm);
    const32(r, static_cast<std::uint32_t>(o.imm));
  }
  bool blind() const { return options_.blind_constants; }
  // The frame bytes of the function instruction i is in.
  std::int32_t frame(std::uint32_t i) const { return static_cast<std::int32_t>(frames_.of_op[i]); }

  void to_stub(Stub s, Cond c) { stub_refs_[static_cast<int>(s)].push_back(e_.jcc(c)); }
  void jmp_stub(Stub s) { stub_refs_[static_cast<int>(s)].push_back(e_.jmp()); }
  void store_state32(std::int32_t off, std::uint32_t v) {  // mov dword [r12 + off], v
    e_.mem_imm32(false, 0xc7, 0, kState, off, static_cast<std::int32_t>(v));
  }
  void set_pc(std::uint32_t i) { store_state32(kOffPc, i); }

  void prologue();
  // The entry of a leaf program, a LeafFn: nothing in it can fail or leave the code, so it needs
  // no State, no saved stack pointer and no stubs; only the callee-saved registers the program
  // names are saved, and its frame (Frames::reserve) is made on the native stack by the code.
  // The main function's code follows it, entered by a call, or, when the entry saved nothing and
  // made no frame, by falling into it.
  void leaf_prologue();
  // The error stubs and the unwinding to the entry's saved stack pointer, where `after_main`
  // (the jump after the entry's call) lands too.
  void stubs_and_unwinding(std::size_t after_main);
  void op(std::uint32_t i, const vm::Op& o);
  void alu(std::uint32_t i, const vm::Op& o, bool w, int kind, bool x);
  void divmod(const vm::Op& o, bool w, bool is_signed, bool mod, bool x);
  void shift(const vm::Op& o, bool w, int ext, bool x);
  void shift_by(Reg count, Reg d, bool w, int ext);
  void jump(const vm::Op& o, std::uint32_t i, bool w, Cond c, bool x, bool test);
  void check(std::uint32_t i, int base, std::int32_t off, int size, int flags);
  // A probe load: vm's probe_load through probe_load_from_jit, r0..r5 kept.
  void probe_load(const vm::Op& o);
  void spend_budget(std::uint32_t i);
  void helper_call(std::uint32_t i, bool indirect, const vm::Op& o);
  void tail_call(std::uint32_t i);
  // A bpf-to-bpf call in a frame of its own: to instruction `target`, or (loop callbacks) to the
  // address at [rsp + `address_slot`] as it was before the call sequence's pushes.
  void local_call(std::uint32_t i, std::uint32_t target, std::int32_t address_slot);
  // r11 = the code of the callback whose instruction index `index` holds (a function an lddw
  // named, as the interpreter requires); any other value stops the run with kBadHelper.
  void callback_code(std::uint32_t i, Reg index);
  void loop(std::uint32_t i);
  // Any other callback-calling helper (bpf_find_vma): its CallbackDriver's steps, as the
  // interpreter's op_LOOP takes them, around the JIT's local call of the callback.
  void driven_callback(std::uint32_t i, const vm::Op& o);
  void atomic(std::uint32_t i, const vm::Op& o);
};

}  // namespace userperf::bpf::x86jit
