#include "bpf/isa/opcode_facts.hpp"

#include <array>

namespace userperf::bpf {

namespace {

bool valid_atomic_op(std::int32_t imm) {
  switch (imm) {
    case BPF_ADD:
    case BPF_ADD | BPF_FETCH:
    case BPF_OR:
    case BPF_OR | BPF_FETCH:
    case BPF_AND:
    case BPF_AND | BPF_FETCH:
    case BPF_XOR:
    case BPF_XOR | BPF_FETCH:
    case BPF_XCHG:
    case BPF_CMPXCHG:
      return true;
    default:
      return false;
  }
}

const char* alu_invalid_reason(const Insn& insn, bool alu64) {
  const std::uint8_t op = insn_op(insn.code);
  const bool k = insn_source(insn.code) == BPF_K;
  if (op > BPF_END) return "unknown ALU operation";
  if (op == BPF_NEG) {
    if (!k || insn.src_reg != 0 || insn.imm != 0 || insn.off != 0) return "bad neg encoding";
    return nullptr;
  }
  if (op == BPF_END) {
    if (alu64 && !k) return "unknown ALU64 operation";
    if (insn.imm != 16 && insn.imm != 32 && insn.imm != 64) return "byte swap width not 16/32/64";
    if (insn.src_reg != 0 || insn.off != 0) return "reserved fields of byte swap not zero";
    return nullptr;
  }
  if (op == BPF_DIV || op == BPF_MOD) {
    if (insn.off != 0 && insn.off != 1) return "div/mod offset not 0 or 1";
  } else if (op == BPF_MOV && !k) {
    if (insn.off != 0 && insn.off != 8 && insn.off != 16 && !(alu64 && insn.off == 32)) {
      return "movsx width not 8/16/32";
    }
  } else if (insn.off != 0) {
    return "ALU offset not zero";
  }
  if (k && insn.src_reg != 0) return "src register set with an immediate operand";
  if (!k && insn.imm != 0) return "immediate set with a register operand";
  return nullptr;
}

const char* jmp_invalid_reason(const Insn& insn, bool jmp32) {
  const std::uint8_t op = insn_op(insn.code);
  const bool k = insn_source(insn.code) == BPF_K;
  if (op > BPF_JSLE) return "unknown jump operation";
  switch (op) {
    case BPF_JA:
      if (!k) return "ja with a register operand";
      if (insn.dst_reg != 0 || insn.src_reg != 0) return "registers of ja not zero";
      if (jmp32 ? insn.off != 0 : insn.imm != 0) return "reserved field of ja not zero";
      return nullptr;
    case BPF_CALL:
      if (jmp32) return "call in the JMP32 class";
      if (!k) {  // callx: the target helper id is in dst_reg (bpf_conformance's encoding)
        if (insn.src_reg != 0 || insn.off != 0 || insn.imm != 0) return "bad callx encoding";
        return nullptr;
      }
      if (insn.dst_reg != 0 || insn.off != 0) return "reserved fields of call not zero";
      if (insn.src_reg > BPF_PSEUDO_KFUNC_CALL) return "unknown call kind";
      return nullptr;
    case BPF_EXIT:
      if (jmp32) return "exit in the JMP32 class";
      if (!k || insn.dst_reg != 0 || insn.src_reg != 0 || insn.off != 0 || insn.imm != 0) {
        return "reserved fields of exit not zero";
      }
      return nullptr;
    default:
      if (k && insn.src_reg != 0) return "src register set with an immediate operand";
      if (!k && insn.imm != 0) return "immediate set with a register operand";
      return nullptr;
  }
}

const char* memory_invalid_reason(const Insn& insn) {
  const std::uint8_t cls = insn_class(insn.code);
  const std::uint8_t mode = insn_mode(insn.code);
  const std::uint8_t size = insn_size(insn.code);
  switch (cls) {
    case BPF_LD:
      if (insn.code == (BPF_LD | BPF_IMM | BPF_DW)) {
        if (insn.src_reg > BPF_PSEUDO_MAP_IDX_VALUE) return "unknown lddw source";
        if (insn.off != 0) return "lddw offset not zero";
        return nullptr;
      }
      if ((mode == BPF_ABS || mode == BPF_IND) && size != BPF_DW) {
        if (insn.dst_reg != 0 || insn.off != 0) return "reserved fields of packet load not zero";
        if (mode == BPF_ABS && insn.src_reg != 0) return "src register of ld_abs not zero";
        return nullptr;
      }
      return "unknown LD opcode";
    case BPF_LDX:
      if (mode != BPF_MEM && !(mode == kModeMemsx && size != BPF_DW)) return "unknown LDX mode";
      if (insn.imm != 0) return "LDX immediate not zero";
      return nullptr;
    case BPF_ST:
      if (mode != BPF_MEM) return "unknown ST mode";
      if (insn.src_reg != 0) return "ST src register not zero";
      return nullptr;
    default:  // BPF_STX
      if (mode == BPF_MEM) {
        if (insn.imm != 0) return "STX immediate not zero";
        return nullptr;
      }
      if (mode == BPF_ATOMIC && (size == BPF_W || size == BPF_DW)) {
        return valid_atomic_op(insn.imm) ? nullptr : "unknown atomic operation";
      }
      return "unknown STX mode";
  }
}

// The runner's table as data: cpu version and group per opcode, 0 where it lists nothing.
// Opcodes whose entry depends on src, imm or off are refined in conformance_info().
struct TableEntry {
  std::uint8_t version = 0;
  std::uint8_t group = 0;  // ConformanceGroup bit (all fit in 8 bits)
};

constexpr std::array<TableEntry, 256> make_table() {
  std::array<TableEntry, 256> t{};
  auto set = [&t](int opcode, int version, std::uint32_t group) {
    t[opcode] = {static_cast<std::uint8_t>(version), static_cast<std::uint8_t>(group)};
  };
  constexpr std::uint32_t b32 = kGroupBase32, b64 = kGroupBase64;
  // ALU (32-bit): base32 except mul/div/mod (divmul32).
  for (int op = 0x00; op <= 0xc0; op += 0x10) {
    if (op == 0x80) continue;
    std::uint32_t group = (op == 0x20 || op == 0x30 || op == 0x90) ? kGroupDivmul32 : b32;
    set(op | 0x04, 1, group);
    set(op | 0x0c, 1, group);
  }
  set(0x84, 1, b32);
  set(0xd4, 1, b32);  // le: refined by imm
  set(0xdc, 1, b32);  // be: refined by imm
  // ALU64: base64 except mul/div/mod (divmul64); the runner lists sub64 reg and neg64 as base32.
  for (int op = 0x00; op <= 0xc0; op += 0x10) {
    if (op == 0x80) continue;
    std::uint32_t group = (op == 0x20 || op == 0x30 || op == 0x90) ? kGroupDivmul64 : b64;
    set(op | 0x07, 1, group);
    set(op | 0x0f, 1, group);
  }
  set(0x1f, 1, b32);
  set(0x87, 1, b32);
  set(0xd7, 4, b32);  // bswap: the runner does not compare imm, so every width matches imm 16
  // JMP: conditional jumps base64 (jlt/jle/jslt/jsle are v2), ja/call/exit base32; the runner
  // lists jsgt reg as base32.
  for (int op = 0x10; op <= 0xd0; op += 0x10) {
    if (op == 0x80 || op == 0x90) continue;
    int version = op >= 0xa0 ? 2 : 1;
    set(op | 0x05, version, b64);
    set(op | 0x0d, version, b64);
  }
  set(0x6d, 1, b32);
  set(0x05, 1, b32);
  set(0x85, 1, b32);  // refined by src
  set(0x8d, 1, kGroupCallx);
  set(0x95, 1, b32);
  // JMP32: v3 base32, ja32 v4.
  for (int op = 0x10; op <= 0xd0; op += 0x10) {
    if (op == 0x80 || op == 0x90) continue;
    set(op | 0x06, 3, b32);
    set(op | 0x0e, 3, b32);
  }
  set(0x06, 4, b32);
  // Loads and stores: the DW forms are base64.
  set(0x18, 1, b64);  // refined by src
  for (int code : {0x20, 0x28, 0x30, 0x40, 0x48, 0x50}) set(code, 1, kGroupPacket);
  for (int code : {0x61, 0x69, 0x71, 0x62, 0x6a, 0x72, 0x63, 0x6b, 0x73}) set(code, 1, b32);
  for (int code : {0x79, 0x7a, 0x7b}) set(code, 1, b64);
  for (int code : {0x81, 0x89, 0x91}) set(code, 4, b32);
  set(0xc3, 3, kGroupAtomic32);  // refined by imm
  set(0xdb, 3, kGroupAtomic64);  // refined by imm
  return t;
}

constexpr std::array<TableEntry, 256> kTable = make_table();

constexpr std::array<const char*, 8> kGroupNames = {"base32",   "base64",   "atomic32", "atomic64",
                                                    "divmul32", "divmul64", "callx",    "packet"};

}  // namespace

const char* insn_invalid_reason(const Insn& insn) {
  if (insn.dst_reg >= kNumRegs || insn.src_reg >= kNumRegs) return "register number above r10";
  switch (insn_class(insn.code)) {
    case BPF_ALU:
      return alu_invalid_reason(insn, false);
    case BPF_ALU64:
      return alu_invalid_reason(insn, true);
    case BPF_JMP:
      return jmp_invalid_reason(insn, false);
    case BPF_JMP32:
      return jmp_invalid_reason(insn, true);
    default:
      return memory_invalid_reason(insn);
  }
}

std::optional<ConformanceInfo> conformance_info(const Insn& insn) {
  const TableEntry entry = kTable[insn.code];
  if (entry.version == 0) return std::nullopt;
  ConformanceInfo info{static_cast<CpuVersion>(entry.version), entry.group};
  switch (insn.code) {
    case 0x18:
      if (insn.src_reg > BPF_PSEUDO_MAP_IDX_VALUE) return std::nullopt;
      break;
    case 0x85:
      if (insn.src_reg > BPF_PSEUDO_KFUNC_CALL) return std::nullopt;
      if (insn.src_reg != 0) info.cpu_version = CpuVersion::kV3;
      break;
    case 0x34:
    case 0x37:
    case 0x3c:
    case 0x3f:
    case 0x94:
    case 0x97:
    case 0x9c:
    case 0x9f:
      if (insn.off != 0 && insn.off != 1) return std::nullopt;
      if (insn.off == 1) info.cpu_version = CpuVersion::kV4;  // sdiv/smod
      break;
    case 0xbc:
    case 0xbf:
      if (insn.off == 0) break;
      if (insn.off != 8 && insn.off != 16 && !(insn.code == 0xbf && insn.off == 32)) {
        return std::nullopt;
      }
      info.cpu_version = CpuVersion::kV4;  // movsx
      break;
    case 0xc3:
    case 0xdb:
      if (!valid_atomic_op(insn.imm)) return std::nullopt;
      break;
    case 0xd4:
    case 0xdc:
      if (insn.imm == 64) {
        info.groups = kGroupBase64;
      } else if (insn.imm != 16 && insn.imm != 32) {
        return std::nullopt;
      }
      break;
    default:
      break;
  }
  return info;
}

ConformanceInfo program_conformance(std::span<const Insn> insns) {
  ConformanceInfo needed;
  for (std::size_t i = 0; i < insns.size(); ++i) {
    if (auto info = conformance_info(insns[i])) {
      if (info->cpu_version > needed.cpu_version) needed.cpu_version = info->cpu_version;
      needed.groups |= info->groups;
    }
    if (is_lddw(insns[i])) ++i;
  }
  return needed;
}

const char* cpu_version_name(CpuVersion version) {
  switch (version) {
    case CpuVersion::kV1:
      return "v1";
    case CpuVersion::kV2:
      return "v2";
    case CpuVersion::kV3:
      return "v3";
    case CpuVersion::kV4:
      return "v4";
  }
  return "?";
}

std::optional<CpuVersion> parse_cpu_version(std::string_view name) {
  for (int v = 1; v <= 4; ++v) {
    if (name == cpu_version_name(static_cast<CpuVersion>(v))) return static_cast<CpuVersion>(v);
  }
  return std::nullopt;
}

const char* group_name(ConformanceGroup group) {
  for (std::size_t i = 0; i < kGroupNames.size(); ++i) {
    if (group == (1u << i)) return kGroupNames[i];
  }
  return "?";
}

std::optional<ConformanceGroup> parse_group(std::string_view name) {
  for (std::size_t i = 0; i < kGroupNames.size(); ++i) {
    if (name == kGroupNames[i]) return static_cast<ConformanceGroup>(1u << i);
  }
  return std::nullopt;
}

std::string group_names(std::uint32_t groups) {
  std::string names;
  for (std::size_t i = 0; i < kGroupNames.size(); ++i) {
    if ((groups & (1u << i)) == 0) continue;
    if (!names.empty()) names += ',';
    names += kGroupNames[i];
  }
  return names;
}

}  // namespace userperf::bpf
