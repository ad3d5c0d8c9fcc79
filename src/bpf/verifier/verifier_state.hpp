// One path's abstract machine state: the frames of the call chain, each with its registers and
// its stack tracked per byte (kernel: struct bpf_verifier_state / bpf_func_state).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "bpf/isa/insn.hpp"
#include "bpf/verifier/reg_state.hpp"

namespace userperf::bpf {

enum class StackByte : std::uint8_t { kInvalid, kMisc, kZero, kSpill };

// 8 bytes of stack. type[i] describes the byte at fp - 8*(spi+1) + (7 - i)... in the kernel's
// order: index = (-off - 1) % 8, so type[7] is the lowest address of the slot.
struct StackSlot {
  std::array<StackByte, 8> type{};
  RegState spilled;  // valid while some byte is kSpill
  bool operator==(const StackSlot&) const = default;
};

struct FuncState {
  std::array<RegState, kNumRegs> regs{};
  std::vector<StackSlot> stack;  // slot spi covers [fp - 8*(spi+1), fp - 8*spi)
  std::int32_t callsite = -1;    // the call insn in the caller; -1 for main
  std::uint16_t subprog = 0;
  std::uint8_t frameno = 0;
  // A callback's frame (bpf_loop): its exit returns to the helper call, which may call it again,
  // and its r0 must be 0 or 1 (the kernel's in_callback_fn and callback_ret_range).
  bool in_callback = false;
  // Times this frame's callback-calling helper entered its callback on this path since the last
  // path that skipped it (bounds the iterations by nr_loops; the kernel's callback_depth).
  std::uint32_t callback_depth = 0;
};

// A reference the program holds and must release before it exits (kernel: bpf_reference_state):
// a reserved ringbuf record, released by bpf_ringbuf_submit or bpf_ringbuf_discard.
struct RefState {
  std::uint32_t id = 0;
  std::uint32_t insn_idx = 0;  // the call that acquired it
  bool operator==(const RefState&) const = default;
};

struct VerifierState {
  std::vector<FuncState> frames;  // frames.back() is the current one
  std::vector<RefState> refs;     // the whole call chain's, as the kernel's since 6.13
  // Callbacks entered on this path (the kernel's callback_unroll_depth): a state in a later
  // iteration of a callback is not an infinite loop of the earlier one.
  std::uint32_t callback_unroll_depth = 0;
  FuncState& cur() { return frames.back(); }
  const FuncState& cur() const { return frames.back(); }
};

// A state kept at a prune point, to which later paths are compared (kernel:
// bpf_verifier_state_list).
struct Checkpoint {
  VerifierState state;
  Checkpoint* parent = nullptr;
  std::uint32_t branches = 0;  // paths still being explored below this state
  std::uint32_t hits = 0;      // paths pruned against it
  std::uint32_t misses = 0;    // comparisons that failed (evicted when it rarely helps)
};

}  // namespace userperf::bpf
