// The translation's frame: constants (blinded: from the pool), the entry's prologue, checked mode's
// access and budget tests, and translate(), which lays out the instructions, the error stubs and
// the unwinding, then binds every jump.
#include "bpf/jit/translator.hpp"

namespace userperf::bpf::x86jit {

Translator::Translator(const vm::Program& program, const JitOptions& options, const Frames& frames)
    : program_(program), options_(options), frames_(frames) {}

void Translator::pool_op(bool w, std::uint8_t op, Reg reg, std::uint64_t v, bool two_byte) {
  std::size_t entry = 0;
  while (entry < pool_.size() && pool_[entry] != v) ++entry;
  if (entry == pool_.size()) pool_.push_back(v);
  e_.rex(w, reg, 0, 0);
  if (two_byte) e_.byte(0x0f);
  e_.byte(op);
  e_.byte(static_cast<std::uint8_t>((reg & 7) << 3 | 5));  // mod 00, rm 101: [rip + disp32]
  pool_refs_.push_back({e_.pos(), static_cast<std::uint32_t>(entry)});
  e_.imm32(0);
}

// Blinded, a constant is a pool load, except 0 (no bits an author could choose; the kernel does
// not blind a zero either).
void Translator::const32(Reg r, std::uint32_t v) {
  if (!blind() || v == 0) return e_.mov_imm64(r, v);
  pool_load(r, v);
}

void Translator::const_sext32(Reg r, std::uint64_t v) {
  if (!blind() || v == 0) return e_.mov_imm64(r, v);
  pool_load(r, v);
}

void Translator::const64(Reg r, std::uint64_t v) {
  if (!blind() || v == 0) return e_.mov_imm64(r, v);
  pool_load(r, v);
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

void Translator::leaf_prologue() {
  bool named[kNumRegs] = {};
  for (const vm::Op& o : program_.ops) {
    if (o.dst < kNumRegs) named[o.dst] = true;
    if ((o.src & 0xf) < kNumRegs) named[o.src & 0xf] = true;
  }
  std::vector<Reg> saved;
  for (int r = 6; r <= 10; ++r) {
    if (named[r]) saved.push_back(kMap[r]);
  }
  for (Reg r : saved) e_.push(r);
  // The frame is the code's own, on the native stack below the saved registers: r10 is its top.
  const auto frame = static_cast<std::int32_t>(frames_.reserve);
  if (named[10]) e_.mov_rr(true, RBP, RSP);
  if (frame != 0) e_.alu_imm(true, 5, RSP, frame);
  // The interpreter starts r0 and r3..r9 at zero; r0 not when the first instruction sets it
  // without reading it (filters often begin with `r0 = 0`).
  const vm::Op first = program_.ops.empty() ? vm::Op{} : program_.ops.front();
  using K = vm::OpKind;
  const bool sets_r0 =
      !program_.ops.empty() && first.dst == 0 &&
      (first.kind == K::MOV64_K || first.kind == K::MOV32_K || first.kind == K::LDDW ||
       ((first.kind == K::MOV64_X || first.kind == K::MOV32_X) && (first.src & 0xf) != 0));
  if (!sets_r0) e_.rr(false, 0x31, RAX, RAX);
  for (int r = 3; r <= 9; ++r) {
    if (named[r]) e_.rr(false, 0x31, kMap[r], kMap[r]);
  }
  // A leaf that saves nothing and has no frame falls into its main function, whose `ret` is then
  // the entry's: a call and a return less per run. Otherwise the entry calls the main function and
  // undoes its pushes after: its code must end in a plain `ret`, as a tail call's target does
  // (entered by a jump into its first instruction, in its caller's frame).
  if (saved.empty() && frame == 0) return;
  e_.byte(0xe8);  // call main
  fixups_.push_back({e_.pos(), 0});
  e_.imm32(0);
  if (frame != 0) e_.alu_imm(true, 0, RSP, frame);
  for (auto r = saved.rbegin(); r != saved.rend(); ++r) e_.pop(*r);
  e_.byte(0xc3);
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
  e_.rm(true, 0x8d, R8, RBP, -frame(i));  // lea r8, [rbp - frame]: the active frame's bottom
  e_.mov_imm64(R11, reinterpret_cast<std::uintptr_t>(&check_access));
  e_.call_reg(R11);
  e_.rr(false, 0x84, RAX, RAX);  // test al, al
  for (int k = 5; k >= 0; --k) e_.pop(kSaved[k]);
  to_stub(Stub::kBail, kE);
}

void Translator::probe_load(const vm::Op& o) {
  e_.rm(true, 0x8d, R11, kMap[o.src & 0xf], o.off);  // lea r11, [src + off]
  static constexpr Reg kSaved[] = {RAX, RDI, RSI, RDX, RCX, R8};
  for (Reg r : kSaved) e_.push(r);  // 48 bytes: the stack stays 16-byte aligned
  e_.mov_rr(true, RDI, kState);
  e_.mov_rr(true, RSI, R11);
  e_.mov_imm64(RDX, o.unused);
  e_.mov_imm64(R11, reinterpret_cast<std::uintptr_t>(&probe_load_from_jit));
  e_.call_reg(R11);
  e_.mov_rr(true, R11, RAX);
  for (int k = 5; k >= 0; --k) e_.pop(kSaved[k]);
  e_.mov_rr(true, kMap[o.dst], R11);
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

std::vector<std::uint8_t> Translator::translate() {
  using K = vm::OpKind;
  const std::size_t n = program_.ops.size();
  insn_pos_.assign(n, 0);
  leaf_ = !options_.checked;
  for (const vm::Op& o : program_.ops) {
    tail_calls_ = tail_calls_ || o.kind == K::TAIL_CALL;
    // A probe load reads through the State (the run's env and probe reader): not a leaf either.
    leaf_ = leaf_ && o.kind != K::CALL_HELPER && o.kind != K::CALLX && o.kind != K::CALL_LOCAL &&
            o.kind != K::LOOP && o.kind != K::TAIL_CALL && o.kind != K::PROBE_LDX;
  }
  std::size_t after_main = 0;
  if (leaf_) {
    leaf_prologue();
  } else {
    prologue();
    // Falls here when main returns: status kOk (zero) and rax = r0.
    after_main = e_.jmp();
  }
  for (std::size_t i = 0; i < n; ++i) {
    insn_pos_[i] = e_.pos();
    // lddw's second slot: nothing to emit.
    if (i > 0 && program_.ops[i - 1].kind == K::LDDW) continue;
    op(static_cast<std::uint32_t>(i), program_.ops[i]);
  }
  if (!leaf_) stubs_and_unwinding(after_main);
  for (const Fixup& f : fixups_) e_.bind(f.at, insn_pos_[f.target]);
  pool_offset_ = (e_.pos() + kPoolAlign - 1) / kPoolAlign * kPoolAlign;
  for (const auto& [at, entry] : pool_refs_) e_.bind(at, pool_offset_ + 8 * entry);
  return std::move(e_.code);
}

void Translator::stubs_and_unwinding(std::size_t after_main) {
  // Stubs: status, then the unwinding shared with the normal end.
  std::size_t stub_pos[static_cast<int>(Stub::kCount)] = {};
  for (Stub s : {Stub::kBudget, Stub::kCallDepth, Stub::kBadHelper, Stub::kAborted}) {
    stub_pos[static_cast<int>(s)] = e_.pos();
    RunStatus status = s == Stub::kBudget      ? RunStatus::kBudget
                       : s == Stub::kCallDepth ? RunStatus::kCallDepth
                       : s == Stub::kBadHelper ? RunStatus::kBadHelper
                                               : RunStatus::kAborted;
    store_state32(kOffStatus, static_cast<std::uint32_t>(status));
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
}

}  // namespace userperf::bpf::x86jit
