// Calls in x86-64: helpers (through the State's table, with the run's regions), bpf-to-bpf calls in
// frames of their own, bpf_loop's native loop around its callback, and tail calls.
#include <cerrno>
#include <cstddef>
#include <vector>

#include "bpf/jit/translator.hpp"

namespace userperf::bpf::x86jit {

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
  // call_regions[0].begin = r10 - the frame's size (the active frames); abort = false
  e_.rm(true, 0x8b, R11, kState, kOffCallRegions);
  e_.rm(true, 0x8d, R10, RBP, -frame(i));
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
  if (frame(i) != 0) e_.alu_imm(true, 5, RBP, frame(i));  // sub rbp, the caller's frame
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

void Translator::callback_code(std::uint32_t i, Reg index) {
  // Compare `index` with each function an lddw named; none of them stops the run (kBadHelper).
  std::vector<std::size_t> found;
  for (std::uint32_t callback : program_.callbacks) {
    e_.alu_imm(true, 7, index, static_cast<std::int32_t>(callback));
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
  callback_code(i, RSI);  // r11 = the callback's code
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

// The helper's frame on the native stack (96 bytes keep it 16-byte aligned): the CallbackStep at
// [rsp] (call at 0, args at 8, result at 48), the CallbackState at [rsp + 56], the callback's code
// at [rsp + 80] (before it is resolved: its instruction index).
namespace {
constexpr std::int32_t kStepArgs = offsetof(CallbackStep, args);
constexpr std::int32_t kStepResult = offsetof(CallbackStep, result);
constexpr std::int32_t kStateAt = 56;
constexpr std::int32_t kCallbackAt = 80;
constexpr std::int32_t kDrivenFrame = 96;
static_assert(sizeof(CallbackStep) <= kStateAt && kStateAt + sizeof(CallbackState) <= kCallbackAt);
}  // namespace

void Translator::driven_callback(std::uint32_t i, const vm::Op& o) {
  const auto* driver = reinterpret_cast<const CallbackDriver*>(static_cast<std::uintptr_t>(o.imm));
  static constexpr Reg kArgs[] = {RDI, RSI, RDX, RCX, R8};
  e_.alu_imm(true, 5, RSP, kDrivenFrame);
  for (int r = 0; r < 5; ++r) e_.rm(true, 0x89, kArgs[r], RSP, kStepArgs + 8 * r);
  e_.rm(true, 0x89, kArgs[driver->callback_arg - 1], RSP, kCallbackAt);
  // begin(state, driver, &step.args, &step, &callback state)
  e_.mov_rr(true, RDI, kState);
  e_.mov_imm64(RSI, reinterpret_cast<std::uintptr_t>(driver));
  e_.rm(true, 0x8d, RDX, RSP, kStepArgs);
  e_.mov_rr(true, RCX, RSP);
  e_.rm(true, 0x8d, R8, RSP, kStateAt);
  e_.mov_imm64(R11, reinterpret_cast<std::uintptr_t>(&callback_begin_from_jit));
  e_.call_reg(R11);
  e_.rr(false, 0x84, RAX, RAX);  // test al, al
  const std::size_t no_call = e_.jcc(kE);
  // The callback must be a function an lddw named (as op_LOOP): its code into [rsp + 80].
  e_.rm(true, 0x8b, R10, RSP, kCallbackAt);
  callback_code(i, R10);
  e_.rm(true, 0x89, R11, RSP, kCallbackAt);
  const std::size_t top = e_.pos();
  for (int r = 0; r < 5; ++r) e_.rm(true, 0x8b, kArgs[r], RSP, kStepArgs + 8 * r);
  local_call(i, 0, kCallbackAt);
  // resume(state, driver, r0, &step, &callback state)
  e_.mov_rr(true, RDX, RAX);
  e_.mov_rr(true, RDI, kState);
  e_.mov_imm64(RSI, reinterpret_cast<std::uintptr_t>(driver));
  e_.mov_rr(true, RCX, RSP);
  e_.rm(true, 0x8d, R8, RSP, kStateAt);
  e_.mov_imm64(R11, reinterpret_cast<std::uintptr_t>(&callback_resume_from_jit));
  e_.call_reg(R11);
  e_.rr(false, 0x84, RAX, RAX);
  e_.jcc_back(kNE, top);
  e_.bind(no_call, e_.pos());
  e_.rm(true, 0x8b, RAX, RSP, kStepResult);  // r0 = the helper's result
  e_.alu_imm(true, 0, RSP, kDrivenFrame);
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

}  // namespace userperf::bpf::x86jit
