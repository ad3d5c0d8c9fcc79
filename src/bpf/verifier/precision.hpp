// Precision tracking (the kernel's mark_chain_precision): scalars are compared by value when
// pruning only if their value decided something (a branch, a pointer offset, a helper size). When
// that happens, the instructions of the current path are walked backwards to find which registers
// and stack slots the value came from, and those are marked precise in the path's checkpoints.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "bpf/isa/insn.hpp"
#include "bpf/verifier/verifier_state.hpp"

namespace userperf::bpf {

// One step of a path: an executed instruction, or a checkpoint taken before the next one.
struct HistoryEntry {
  std::uint32_t insn_idx = 0;
  std::int32_t prev = -1;            // the previous entry of the same path, -1: none
  std::int16_t stack_spi = -1;       // a fixed-offset stack access: the slot
  std::uint8_t stack_frame = 0;      // ... and the frame it belongs to
  bool callback_entry = false;       // a callback-calling helper call that entered its callback
  bool global_call = false;          // a call of a global function (not entered)
  Checkpoint* checkpoint = nullptr;  // set: this entry is a checkpoint, not an instruction
};

// Registers and stack slots (of each absolute frame) whose values must be precise.
struct PrecisionSet {
  std::array<std::uint16_t, kMaxCallFrames> regs{};
  std::array<std::uint64_t, kMaxCallFrames> slots{};
  bool empty() const;
};

// Walks the path ending at `tail` (the current frame is `depth`) backwards, marking the
// registers and slots of `need` precise in every checkpoint until each has a precise origin.
void mark_precise(std::span<const Insn> insns, std::vector<HistoryEntry>& history,
                  std::int32_t tail, std::size_t depth, PrecisionSet need);

// Every scalar of a state becomes imprecise (a new checkpoint starts with no requirements).
void mark_all_imprecise(VerifierState& state);

}  // namespace userperf::bpf
