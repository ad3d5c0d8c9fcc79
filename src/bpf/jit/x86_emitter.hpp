// x86-64 machine code, byte by byte: the registers, the condition codes and the Emitter the
// translation writes through (REX, ModRM, immediates, jumps bound later). It knows nothing of BPF.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace userperf::bpf::x86jit {

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

}  // namespace userperf::bpf::x86jit
