// The JIT's stack frames: each function's frame size and the stack a run reserves, from the
// verifier's measure of each function (JitOptions::function_stacks), as the kernel's x86-64 JIT
// gives each function round_up(stack_depth, 8) bytes.
//
// Verified programs: a function's frame is its own depth rounded up to 8; a run reserves the
// largest sum of frames along any chain of at most kMaxCallFrames calls (local calls, and bpf_loop
// from any function to any callback), which the code's call-depth test bounds at run time too.
// Programs that tail-call and unverified ones: kMaxStack per frame and kMaxCallFrames frames. A
// tail call's target runs in its caller's frame and is not known when the caller is compiled, so
// the caller's frames are all kMaxStack; the target's own local calls lower r10 by its frames,
// still at most kMaxCallFrames of them in all (the depth test spans tail calls).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "bpf/isa/insn.hpp"
#include "bpf/vm/decoded_op.hpp"
#include "support/expected.hpp"

namespace userperf::bpf::x86jit {

struct Frames {
  std::vector<std::uint32_t> of_op;  // per op: the frame bytes of the function it is in
  std::uint32_t reserve = 0;         // the stack run() reserves, a multiple of 16
};

// EINVAL when `stacks` does not describe `program`'s functions (a call or callback target that
// starts none, depths past kMaxStack, starts out of order).
Expected<Frames> lay_out_frames(const vm::Program& program, std::span<const FunctionStack> stacks);

}  // namespace userperf::bpf::x86jit
