// One BPF instruction in x86-64: ALU (division and shifts as RFC 9669 defines them), jumps, loads
// and stores, atomics, and op(), which dispatches on the decoded kind.
#include <cerrno>

#include "bpf/jit/translator.hpp"

namespace userperf::bpf::x86jit {

void Translator::alu(std::uint32_t, const vm::Op& o, bool w, int kind, bool x) {
  const Reg d = kMap[o.dst];
  const Reg s = kMap[o.src & 0xf];
  const auto imm = static_cast<std::int32_t>(static_cast<std::uint32_t>(o.imm));
  // kind: 0 add, 1 or, 4 and, 5 sub, 6 xor (group-1 extensions)
  static constexpr std::uint8_t kRegOp[] = {0x01, 0x09, 0, 0, 0x21, 0x29, 0x31};
  static constexpr std::uint8_t kMemOp[] = {0x03, 0x0b, 0, 0, 0x23, 0x2b, 0x33};  // op r, r/m
  if (x) {
    e_.rr(w, kRegOp[kind], s, d);
  } else if (blind()) {  // the operand from the pool, in the op itself
    pool_op(w, kMemOp[kind], d, k_value(o, w));
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
  if (!x && blind()) {  // the comparand from the pool: cmp d, [rip + x] (or test)
    pool_op(w, test ? 0x85 : 0x3b, d, k_value(o, w));
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
        if (blind()) return pool_op(w, 0xaf, d, k_value(o, w), true);  // imul d, [rip + x]
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
      if (reinterpret_cast<const CallbackDriver*>(static_cast<std::uintptr_t>(o.imm)) ==
          &bpf_loop_driver()) {
        return loop(i);
      }
      return driven_callback(i, o);
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
    case K::PROBE_LDX:
      return probe_load(o);
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

}  // namespace userperf::bpf::x86jit
