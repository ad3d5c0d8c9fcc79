// The instruction encoding (RFC 9669): the kernel's struct bpf_insn, with the opcode parts and the
// cpu v4 encodings that <linux/bpf.h> of Debian's 6.1 headers does not name yet.
#pragma once

#include <linux/bpf.h>

#include <cstdint>

namespace userperf::bpf {

using Insn = bpf_insn;  // code, dst_reg:4, src_reg:4, off (s16), imm (s32)

inline constexpr std::uint8_t kModeMemsx = 0x80;  // BPF_MEMSX: sign-extending LDX (v4)
// The kernel's internal BPF_PROBE_MEM / BPF_PROBE_MEMSX (LDX modes no program may use): a load the
// verifier typed through a BTF pointer, which reads the synthetic kernel memory and gives 0 where
// that read fails (the kernel's exception table), never touching real memory.
inline constexpr std::uint8_t kModeProbeMem = 0x20;
inline constexpr std::uint8_t kModeProbeMemsx = 0x40;
inline constexpr int kNumRegs = 11;       // r0..r10
inline constexpr int kFramePointer = 10;  // r10, read-only
inline constexpr int kMaxStack = 512;     // MAX_BPF_STACK, per frame and in total
inline constexpr int kMaxCallFrames = 8;  // MAX_CALL_FRAMES

// One function's own stack use as the verifier measured it (the kernel's
// subprog_info[i].stack_depth: the deepest byte below r10 it touches, unrounded). `start` is the
// function's first instruction in the program the verifier returns (ctx loads rewritten).
struct FunctionStack {
  std::uint32_t start = 0;
  std::uint32_t depth = 0;
};

constexpr std::uint8_t insn_class(std::uint8_t code) {
  return code & 0x07;
}
constexpr std::uint8_t insn_op(std::uint8_t code) {
  return code & 0xf0;
}  // ALU/JMP op
constexpr std::uint8_t insn_source(std::uint8_t code) {
  return code & 0x08;
}  // BPF_K / BPF_X
constexpr std::uint8_t insn_size(std::uint8_t code) {
  return code & 0x18;
}  // LD/ST size
constexpr std::uint8_t insn_mode(std::uint8_t code) {
  return code & 0xe0;
}  // LD/ST mode
// The bytes a load or store of this size moves: 1, 2, 4 or 8 (the kernel's bpf_size_to_bytes).
constexpr int insn_access_bytes(std::uint8_t code) {
  switch (insn_size(code)) {
    case BPF_B:
      return 1;
    case BPF_H:
      return 2;
    case BPF_W:
      return 4;
    default:
      return 8;
  }
}

constexpr bool is_lddw(const Insn& insn) {
  return insn.code == (BPF_LD | BPF_IMM | BPF_DW);
}

constexpr Insn make_insn(std::uint8_t code, std::uint8_t dst, std::uint8_t src, std::int16_t off,
                         std::int32_t imm) {
  Insn insn{};
  insn.code = code;
  insn.dst_reg = dst & 0xf;
  insn.src_reg = src & 0xf;
  insn.off = off;
  insn.imm = imm;
  return insn;
}

}  // namespace userperf::bpf
