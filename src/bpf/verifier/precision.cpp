#include "bpf/verifier/precision.hpp"

#include "bpf/verifier/program_shape.hpp"

namespace userperf::bpf {
namespace {

// Also require the scalars linked to a required one (copies refined together by jumps).
void add_linked(const VerifierState& state, PrecisionSet& need) {
  for (std::size_t f = 0; f < state.frames.size(); ++f) {
    for (int r = 0; r < kNumRegs; ++r) {
      const RegState& reg = state.frames[f].regs[static_cast<std::size_t>(r)];
      if (!(need.regs[f] & reg_bit(r)) || reg.type != RegType::kScalar || reg.id == 0) continue;
      for (std::size_t g = 0; g < state.frames.size(); ++g) {
        for (int q = 0; q < kNumRegs; ++q) {
          const RegState& other = state.frames[g].regs[static_cast<std::size_t>(q)];
          if (other.type == RegType::kScalar && other.id == reg.id) need.regs[g] |= reg_bit(q);
        }
      }
    }
  }
}

// Marks what `need` names in a checkpoint; what is already precise there (or not a scalar) is
// settled and leaves the set.
void apply_to_checkpoint(VerifierState& state, PrecisionSet& need) {
  add_linked(state, need);
  for (std::size_t f = 0; f < static_cast<std::size_t>(kMaxCallFrames); ++f) {
    if (f >= state.frames.size()) {
      need.regs[f] = 0;
      need.slots[f] = 0;
      continue;
    }
    FuncState& frame = state.frames[f];
    for (int r = 0; r < kNumRegs; ++r) {
      if (!(need.regs[f] & reg_bit(r))) continue;
      RegState& reg = frame.regs[static_cast<std::size_t>(r)];
      if (reg.type != RegType::kScalar || reg.precise) {
        need.regs[f] = static_cast<std::uint16_t>(need.regs[f] & ~reg_bit(r));
      } else {
        reg.precise = true;
      }
    }
    for (std::size_t spi = 0; spi < 64; ++spi) {
      const std::uint64_t mask = 1ULL << spi;
      if (!(need.slots[f] & mask)) continue;
      if (spi >= frame.stack.size()) {
        need.slots[f] &= ~mask;
        continue;
      }
      StackSlot& slot = frame.stack[spi];
      if (slot.type[7] != StackByte::kSpill || slot.spilled.type != RegType::kScalar ||
          slot.spilled.precise) {
        need.slots[f] &= ~mask;
      } else {
        slot.spilled.precise = true;
      }
    }
  }
}

void backtrack_memory(const Insn& in, const HistoryEntry& entry, std::uint16_t& regs,
                      PrecisionSet& need) {
  const std::uint8_t cls = insn_class(in.code);
  const std::uint16_t dst = reg_bit(in.dst_reg);
  const std::uint16_t src = reg_bit(in.src_reg);
  if (cls == BPF_LDX) {
    if (!(regs & dst)) return;
    regs = static_cast<std::uint16_t>(regs & ~dst);
    if (entry.stack_spi >= 0) need.slots[entry.stack_frame] |= 1ULL << entry.stack_spi;
    return;
  }
  if (entry.stack_spi < 0) return;
  std::uint64_t& slots = need.slots[entry.stack_frame];
  const std::uint64_t mask = 1ULL << entry.stack_spi;
  if (insn_mode(in.code) == BPF_ATOMIC) {
    // The fetched value (into src, or r0 for cmpxchg) came from the slot; the slot's new value
    // from src.
    const std::uint16_t fetched = in.imm == BPF_CMPXCHG ? reg_bit(0) : src;
    if (regs & fetched) {
      regs = static_cast<std::uint16_t>(regs & ~fetched);
      slots |= mask;
    }
    if (slots & mask) regs |= src;
    return;
  }
  if (!(slots & mask)) return;
  slots &= ~mask;
  if (cls == BPF_STX) regs |= src;
}

// `subseq`: the instruction the path executed after this one (-1: none, the current one).
void backtrack_jump(const Insn& in, const HistoryEntry& entry, const Insn* subseq,
                    std::size_t& depth, PrecisionSet& need) {
  std::uint16_t& regs = need.regs[depth];
  const std::uint8_t op = insn_op(in.code);
  if (op == BPF_CALL) {
    if (entry.callback_entry) {
      // Out of the callback's first instruction into the helper call that entered it: the
      // helper, not the caller, set the callback's r1-r5, and the caller's registers are as the
      // call found them.
      if (depth == 0) return;
      need.regs[depth] = 0;
      need.slots[depth] = 0;
      --depth;
      return;
    }
    if (in.src_reg != BPF_PSEUDO_CALL || entry.global_call) {
      // r0 from the helper (or the global function, verified on its own), r1-r5 clobbered.
      regs = static_cast<std::uint16_t>(regs & ~0x3f);
      return;
    }
    // Out of the callee's first instruction into the caller: the arguments r1-r5.
    if (depth == 0) return;
    const auto args = static_cast<std::uint16_t>(regs & 0x3e);
    need.regs[depth] = 0;
    need.slots[depth] = 0;
    --depth;
    need.regs[depth] = static_cast<std::uint16_t>((need.regs[depth] & ~0x3f) | args);
    return;
  }
  if (op == BPF_EXIT) {
    if (depth + 1 >= static_cast<std::size_t>(kMaxCallFrames)) return;
    if (subseq && calls_callback(*subseq)) {
      // A callback's exit back to its helper call: nothing of the caller comes from it (the
      // call sets r0 and clobbers r1-r5 after it).
      regs = static_cast<std::uint16_t>(regs & ~0x3f);
      ++depth;
      need.regs[depth] = 0;
      need.slots[depth] = 0;
      return;
    }
    // Back into a callee that returned: the caller's r0 is the callee's.
    const bool r0 = regs & reg_bit(0);
    regs = static_cast<std::uint16_t>(regs & ~reg_bit(0));
    ++depth;
    need.regs[depth] = r0 ? reg_bit(0) : 0;
    need.slots[depth] = 0;
    return;
  }
  const std::uint16_t dst = reg_bit(in.dst_reg);
  const std::uint16_t src = reg_bit(in.src_reg);
  if (op != BPF_JA && insn_source(in.code) == BPF_X && (regs & (dst | src))) regs |= dst | src;
}

// One instruction backwards: which values the required ones were computed from.
void backtrack_insn(const Insn& in, const HistoryEntry& entry, const Insn* subseq,
                    std::size_t& depth, PrecisionSet& need) {
  std::uint16_t& regs = need.regs[depth];
  const std::uint8_t cls = insn_class(in.code);
  const std::uint8_t op = insn_op(in.code);
  const std::uint16_t dst = reg_bit(in.dst_reg);
  switch (cls) {
    case BPF_ALU:
    case BPF_ALU64:
      if (!(regs & dst)) return;
      if (op == BPF_MOV) {
        regs = static_cast<std::uint16_t>(regs & ~dst);
        if (insn_source(in.code) == BPF_X) regs |= reg_bit(in.src_reg);
      } else if (insn_source(in.code) == BPF_X && op != BPF_NEG && op != BPF_END) {
        regs |= reg_bit(in.src_reg);
      }
      return;
    case BPF_LDX:
    case BPF_ST:
    case BPF_STX:
      backtrack_memory(in, entry, regs, need);
      return;
    case BPF_LD:
      regs = static_cast<std::uint16_t>(regs & ~dst);
      return;
    default:
      backtrack_jump(in, entry, subseq, depth, need);
      return;
  }
}

}  // namespace

bool PrecisionSet::empty() const {
  for (std::size_t f = 0; f < static_cast<std::size_t>(kMaxCallFrames); ++f) {
    if (regs[f] || slots[f]) return false;
  }
  return true;
}

void mark_precise(std::span<const Insn> insns, std::vector<HistoryEntry>& history,
                  std::int32_t tail, std::size_t depth, PrecisionSet need) {
  for (auto& r : need.regs) r = static_cast<std::uint16_t>(r & ~reg_bit(kFramePointer));
  const Insn* subseq = nullptr;
  for (std::int32_t at = tail; at >= 0 && !need.empty();) {
    HistoryEntry& entry = history[static_cast<std::size_t>(at)];
    if (entry.checkpoint) {
      apply_to_checkpoint(entry.checkpoint->state, need);
    } else {
      backtrack_insn(insns[entry.insn_idx], entry, subseq, depth, need);
      subseq = &insns[entry.insn_idx];
    }
    at = entry.prev;
  }
}

void mark_all_imprecise(VerifierState& state) {
  for (FuncState& f : state.frames) {
    for (RegState& r : f.regs) r.precise = false;
    for (StackSlot& s : f.stack) s.spilled.precise = false;
  }
}

}  // namespace userperf::bpf
