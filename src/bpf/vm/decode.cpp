// Structural checks and translation to the decoded form.
#include <string>

#include "bpf/isa/opcode_facts.hpp"
#include "bpf/vm/decoded_op.hpp"

namespace userperf::bpf::vm {

namespace {

inline constexpr std::size_t kMaxInsns = 1'000'000;  // BPF_COMPLEXITY_LIMIT_INSNS

// Kinds come in K/X pairs, in the order of the ALU and JMP op codes (see decoded_op.hpp).
OpKind alu_kind(const Insn& insn) {
  const bool alu64 = insn_class(insn.code) == BPF_ALU64;
  const bool x = insn_source(insn.code) == BPF_X;
  const int base = alu64 ? static_cast<int>(OpKind::ADD64_K) : static_cast<int>(OpKind::ADD32_K);
  auto pick = [&](OpKind k64) {
    int index = static_cast<int>(k64) - static_cast<int>(OpKind::ADD64_K) + base;
    return static_cast<OpKind>(index + (x ? 1 : 0));
  };
  const bool is_signed = insn.off == 1;
  switch (insn_op(insn.code)) {
    case BPF_ADD:
      return pick(OpKind::ADD64_K);
    case BPF_SUB:
      return pick(OpKind::SUB64_K);
    case BPF_MUL:
      return pick(OpKind::MUL64_K);
    case BPF_DIV:
      return pick(is_signed ? OpKind::SDIV64_K : OpKind::DIV64_K);
    case BPF_OR:
      return pick(OpKind::OR64_K);
    case BPF_AND:
      return pick(OpKind::AND64_K);
    case BPF_LSH:
      return pick(OpKind::LSH64_K);
    case BPF_RSH:
      return pick(OpKind::RSH64_K);
    case BPF_MOD:
      return pick(is_signed ? OpKind::SMOD64_K : OpKind::MOD64_K);
    case BPF_XOR:
      return pick(OpKind::XOR64_K);
    case BPF_ARSH:
      return pick(OpKind::ARSH64_K);
    case BPF_NEG:
      return alu64 ? OpKind::NEG64 : OpKind::NEG32;
    case BPF_MOV:
      switch (insn.off) {
        case 8:
          return alu64 ? OpKind::MOVSX8_64 : OpKind::MOVSX8_32;
        case 16:
          return alu64 ? OpKind::MOVSX16_64 : OpKind::MOVSX16_32;
        case 32:
          return OpKind::MOVSX32_64;
        default:
          return pick(OpKind::MOV64_K);
      }
    default: {  // BPF_END
      const int width = insn.imm == 16 ? 0 : insn.imm == 32 ? 1 : 2;
      OpKind first = alu64 ? OpKind::BSWAP16 : x ? OpKind::BE16 : OpKind::LE16;
      return static_cast<OpKind>(static_cast<int>(first) + width);
    }
  }
}

OpKind jmp_kind(const Insn& insn) {
  const bool x = insn_source(insn.code) == BPF_X;
  const int base = insn_class(insn.code) == BPF_JMP ? static_cast<int>(OpKind::JEQ64_K)
                                                    : static_cast<int>(OpKind::JEQ32_K);
  // JEQ..JSGE are ops 1..7, JLT..JSLE ops 10..13: consecutive pairs in the kind list.
  int op = insn_op(insn.code) >> 4;
  int index = op <= 7 ? op - 1 : op - 3;
  return static_cast<OpKind>(base + 2 * index + (x ? 1 : 0));
}

OpKind memory_kind(const Insn& insn) {
  const int size = insn_size(insn.code) >> 3;     // W, H, B, DW
  static constexpr int kBySize[] = {2, 1, 0, 3};  // -> B, H, W, DW order of the kinds
  const int order = kBySize[size];
  switch (insn_class(insn.code)) {
    case BPF_LDX:
      if (insn_mode(insn.code) == kModeMemsx)
        return static_cast<OpKind>(static_cast<int>(OpKind::LDXSB) + order);
      return static_cast<OpKind>(static_cast<int>(OpKind::LDXB) + order);
    case BPF_ST:
      return static_cast<OpKind>(static_cast<int>(OpKind::STB) + order);
    default:
      if (insn_mode(insn.code) == BPF_MEM)
        return static_cast<OpKind>(static_cast<int>(OpKind::STXB) + order);
      break;
  }
  const int first = insn_size(insn.code) == BPF_W ? static_cast<int>(OpKind::ATOMIC_ADD32)
                                                  : static_cast<int>(OpKind::ATOMIC_ADD64);
  int index;
  switch (insn.imm) {
    case BPF_XCHG:
      index = 8;
      break;
    case BPF_CMPXCHG:
      index = 9;
      break;
    default: {
      const int op = insn.imm & ~BPF_FETCH;
      index = op == BPF_ADD ? 0 : op == BPF_OR ? 1 : op == BPF_AND ? 2 : 3;
      if (insn.imm & BPF_FETCH) index += 4;
    }
  }
  return static_cast<OpKind>(first + index);
}

// The driver of a helper call that calls a callback: bpf_loop's, or one the options give.
const CallbackDriver* callback_driver(const Insn& insn, const InterpreterOptions& options) {
  if (insn.src_reg != 0) return nullptr;
  if (insn.imm == kLoopHelperId) return &bpf_loop_driver();
  for (const auto& [id, driver] : options.callback_helpers) {
    if (id == insn.imm) return driver;
  }
  return nullptr;
}

// A load the verifier marked as a probe load (kModeProbeMem, kModeProbeMemsx): the kernel's
// internal modes, which the ISA's validity (insn_invalid_reason) does not know.
bool is_probe_load(const Insn& insn) {
  if (insn_class(insn.code) != BPF_LDX || insn.imm != 0 || insn.dst_reg >= kNumRegs ||
      insn.src_reg >= kNumRegs) {
    return false;
  }
  const std::uint8_t mode = insn_mode(insn.code);
  return mode == kModeProbeMem || (mode == kModeProbeMemsx && insn_size(insn.code) != BPF_DW);
}

bool writes_dst(const Insn& insn) {
  switch (insn_class(insn.code)) {
    case BPF_ALU:
    case BPF_ALU64:
    case BPF_LDX:
      return true;
    case BPF_LD:
      return is_lddw(insn);
    default:
      return false;
  }
}

}  // namespace

Expected<Program> decode(std::span<const Insn> insns, InterpreterOptions options) {
  const std::size_t n = insns.size();
  if (n == 0) return make_error(EINVAL, "empty program");
  if (n > kMaxInsns) {
    return make_error(E2BIG, "program of " + std::to_string(n) + " instructions exceeds " +
                                 std::to_string(kMaxInsns));
  }
  auto fail = [](std::size_t i, const std::string& why) {
    return make_error(EINVAL, "instruction " + std::to_string(i) + ": " + why);
  };
  // Second slots of lddw: not instructions, and not jump targets.
  std::vector<bool> second_slot(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    if (second_slot[i]) continue;
    const Insn& insn = insns[i];
    if (const char* why = is_probe_load(insn) ? nullptr : insn_invalid_reason(insn)) {
      return fail(i, why);
    }
    if (is_lddw(insn)) {
      if (i + 1 >= n) return fail(i, "incomplete lddw");
      const Insn& next = insns[i + 1];
      if (next.code != 0 || next.dst_reg != 0 || next.src_reg != 0 || next.off != 0) {
        return fail(i, "bad second slot of lddw");
      }
      if (insn.src_reg != 0 && insn.src_reg != BPF_PSEUDO_FUNC) {
        return fail(i, "unrelocated lddw pseudo source " + std::to_string(insn.src_reg));
      }
      second_slot[i + 1] = true;
    }
    const std::uint8_t cls = insn_class(insn.code);
    if (cls == BPF_LD && !is_lddw(insn)) return fail(i, "legacy packet access is not supported");
    if (insn.code == (BPF_JMP | BPF_CALL) && insn.src_reg == BPF_PSEUDO_KFUNC_CALL) {
      return fail(i, "kfunc calls are not supported");
    }
    if (writes_dst(insn) && insn.dst_reg == kFramePointer)
      return fail(i, "frame pointer is read only");
  }

  Program program;
  program.ops.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    Op& op = program.ops[i];
    const Insn& insn = insns[i];
    op.dst = insn.dst_reg;
    op.src = insn.src_reg;
    op.off = insn.off;
    op.imm = static_cast<std::uint64_t>(static_cast<std::int64_t>(insn.imm));
    if (second_slot[i]) {
      op.kind = OpKind::JA;  // never executed: lddw steps over it
      op.off = static_cast<std::int32_t>(i + 1);
      continue;
    }
    auto jump_to = [&](std::int64_t rel) -> const char* {
      std::int64_t target = static_cast<std::int64_t>(i) + 1 + rel;
      if (target < 0 || target >= static_cast<std::int64_t>(n)) return "jump out of range";
      if (second_slot[target]) return "jump into the middle of lddw";
      op.off = static_cast<std::int32_t>(target);
      return nullptr;
    };
    const char* why = nullptr;
    switch (insn_class(insn.code)) {
      case BPF_ALU:
      case BPF_ALU64:
        op.kind = alu_kind(insn);
        if (insn_class(insn.code) == BPF_ALU && insn_source(insn.code) == BPF_K) {
          op.imm &= 0xffffffff;  // 32-bit ops use the immediate's low half, unextended
        }
        break;
      case BPF_JMP:
      case BPF_JMP32:
        switch (insn_op(insn.code)) {
          case BPF_JA:
            op.kind = OpKind::JA;
            why = jump_to(insn_class(insn.code) == BPF_JMP32 ? insn.imm : insn.off);
            break;
          case BPF_EXIT:
            op.kind = OpKind::EXIT;
            break;
          case BPF_CALL:
            if (insn_source(insn.code) == BPF_X) {
              op.kind = OpKind::CALLX;
            } else if (insn.src_reg == BPF_PSEUDO_CALL) {
              op.kind = OpKind::CALL_LOCAL;
              why = jump_to(insn.imm);
            } else if (insn.imm == kTailCallHelperId && options.tail_call != nullptr) {
              op.kind = OpKind::TAIL_CALL;
              program.calls_helpers = true;  // the target may call one
            } else if (const CallbackDriver* driver = callback_driver(insn, options)) {
              op.kind = OpKind::LOOP;
              op.imm = reinterpret_cast<std::uintptr_t>(driver);
            } else {
              op.kind = OpKind::CALL_HELPER;
              HelperFn fn = nullptr;
              if (insn.imm >= 0 && static_cast<std::size_t>(insn.imm) < options.helpers.size()) {
                fn = options.helpers[static_cast<std::size_t>(insn.imm)];
              }
              op.imm = reinterpret_cast<std::uintptr_t>(fn);  // 0: kBadHelper at run time
              program.calls_helpers = true;
            }
            if (op.kind == OpKind::CALLX) program.calls_helpers = true;
            break;
          default:
            op.kind = jmp_kind(insn);
            if (insn_class(insn.code) == BPF_JMP32 && insn_source(insn.code) == BPF_K) {
              op.imm &= 0xffffffff;
            }
            why = jump_to(insn.off);
        }
        break;
      case BPF_LD:  // lddw (the rest was rejected above)
        op.kind = OpKind::LDDW;
        if (insn.src_reg == BPF_PSEUDO_FUNC) {  // a function's address: its first instruction
          why = jump_to(insn.imm);
          op.imm = static_cast<std::uint64_t>(op.off);
          program.callbacks.push_back(static_cast<std::uint32_t>(op.off));
          break;
        }
        op.imm = static_cast<std::uint32_t>(insn.imm) |
                 static_cast<std::uint64_t>(static_cast<std::uint32_t>(insns[i + 1].imm)) << 32;
        break;
      default:
        if (insn_class(insn.code) == BPF_LDX &&
            (insn_mode(insn.code) == kModeProbeMem || insn_mode(insn.code) == kModeProbeMemsx)) {
          op.kind = OpKind::PROBE_LDX;
          op.unused = static_cast<std::uint8_t>(
              insn_access_bytes(insn.code) | (insn_mode(insn.code) == kModeProbeMemsx ? 0x80 : 0));
          break;
        }
        op.kind = memory_kind(insn);
    }
    if (why) return fail(i, why);
  }
  // The last instruction must not fall off the end.
  const Insn& last = insns[n - 1];
  const bool terminates =
      !second_slot[n - 1] && (last.code == (BPF_JMP | BPF_EXIT) ||
                              last.code == (BPF_JMP | BPF_JA) || last.code == (BPF_JMP32 | BPF_JA));
  if (!terminates) return fail(n - 1, "the last instruction can fall through the end");

  program.helpers = std::move(options.helpers);
  program.static_regions = std::move(options.static_regions);
  program.instruction_budget = options.instruction_budget;
  program.tail_call = options.tail_call;
  program.probe_read = options.probe_read;
  return program;
}

}  // namespace userperf::bpf::vm
