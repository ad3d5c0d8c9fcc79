// The x86-64 JIT: translates a program into machine code with the interpreter's run() contract
// (RunResult, r1/r2, memory regions, helpers by id, signal-safe and reentrant: no allocation in
// run(), a fresh stack for every run: of the frames the verifier measured, frames.hpp).
//
// Two modes. Unchecked (the default) is only for programs the verifier accepted: loads and stores
// go straight to memory, as the verifier proved them in bounds. Checked (`checked = true`) is for
// programs nobody verified (the conformance suite, the differential test): every load, store and
// atomic calls a check against the run's regions as the interpreter does, backward jumps and
// local calls spend a budget, and r1..r5 survive helper calls as in the interpreter.
//
// The code is written into read-write memory, then mprotect()ed to read+execute: never writable
// and executable at once. Other architectures: load() returns ENOTSUP and callers use the
// interpreter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "bpf/isa/helper_call.hpp"
#include "bpf/isa/insn.hpp"
#include "bpf/isa/memory_region.hpp"
#include "bpf/vm/interpreter.hpp"
#include "support/expected.hpp"

namespace userperf::bpf {

struct JitOptions {
  // Helpers by kernel helper id; nullptr entries are unknown helpers (kBadHelper if called).
  std::vector<HelperFn> helpers;
  // Memory every run may touch besides its stack and run()'s regions (checked mode only).
  std::vector<MemoryRegion> static_regions;
  // When set, helper 12 is the kernel's tail call (InterpreterOptions::tail_call): a target with
  // JIT code (TailCallSlot::jit) is jumped into, in the caller's frame; one without runs on its
  // interpreter and its r0 is returned from the calling function. Unchecked mode only.
  TailCallResolver tail_call = nullptr;
  // Probe loads (loads the verifier typed through BTF pointers): the interpreter's
  // (InterpreterOptions::probe_read), called through vm's probe_load.
  ProbeRead probe_read = nullptr;
  // Callback-calling helpers besides bpf_loop (InterpreterOptions::callback_helpers): their
  // drivers' steps run around the JIT's local call of the callback.
  std::vector<std::pair<std::int32_t, const CallbackDriver*>> callback_helpers;
  // Memory checks, budget and the interpreter's register behaviour around helper calls; for
  // programs the verifier did not accept. Unchecked code must only be made of verified programs.
  bool checked = false;
  // Checked mode: backward jumps and local calls a run may take before it stops with kBudget;
  // 0 = no limit.
  std::uint64_t budget = 0;
  // Constant blinding (the kernel's bpf_jit_blind_constants, by other means): every immediate of
  // the program — ALU/ALU64 K operands (shift counts included), JMP/JMP32 K comparands, ST
  // immediates, both halves of lddw — is read RIP-relative from a constant pool in read-only,
  // non-executable pages after the code: by the op itself where x86 has a memory form (ALU, mul,
  // compares: as many instructions as unblinded code), else by a load into its register or a
  // scratch register the program cannot name. So no constant the program's author chose appears
  // in executable memory (a JIT-spraying gadget), and no key is needed (the kernel's xor with a
  // random key adds two instructions per constant). For programs from objects userperf does not
  // trust: the runtime sets it for every program it loads (docs/bpf.md).
  bool blind_constants = false;
  // The verifier's measure of each function's own stack (VerifyResult::function_stacks): each
  // frame is round_up(depth, 8) bytes and a run reserves the deepest chain's sum (frames.hpp).
  // Empty (programs nobody verified): kMaxStack per frame, kMaxCallFrames frames. Programs with
  // TAIL_CALL ops get kMaxStack frames too (their unknown targets run in them).
  std::vector<FunctionStack> function_stacks;
};

// True on x86-64 builds.
bool jit_supported();
// False when the environment sets USERPERF_BPF_JIT=0 (read once): the runtime then runs every
// program on the interpreter.
bool jit_allowed_by_environment();

class Jit {
 public:
  // The interpreter's structural checks (vm::decode), then translation. A bad program is an error
  // naming the instruction; ENOTSUP off x86-64.
  static Expected<std::unique_ptr<Jit>> load(std::span<const Insn> insns, JitOptions options);
  ~Jit();
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;

  // As Interpreter::run. SIGNAL-SAFE, reentrant. A leaf (below) is one indirect call: its code
  // makes its own stack frame and cannot fail.
  RunResult run(std::uint64_t r1, std::uint64_t r2, std::span<const MemoryRegion> regions,
                void* env) const {
    if (leaf_ != nullptr) return RunResult{RunStatus::kOk, leaf_(r1, r2), 0, 0};
    return run_with_state(r1, r2, regions, env);
  }

  std::size_t size() const;       // instructions
  std::size_t code_size() const;  // bytes of machine code
  // Unchecked code that calls no helper, local function, bpf_loop or tail call: run() enters it
  // without the run's State, and neither it nor run() reads `regions` or `env`.
  bool leaf() const { return leaf_ != nullptr; }
  using LeafEntry = std::uint64_t (*)(std::uint64_t r1, std::uint64_t r2);
  // A leaf's code, for a caller that calls it itself (nullptr: not a leaf). SIGNAL-SAFE.
  LeafEntry leaf_entry() const { return leaf_; }
  // The stack bytes run() reserves (frames.hpp).
  std::uint32_t stack_reserve() const;
  // The generated machine code (read+execute memory), for tests that inspect it.
  std::span<const std::uint8_t> code() const;

 private:
  Jit();
  RunResult run_with_state(std::uint64_t r1, std::uint64_t r2,
                           std::span<const MemoryRegion> regions, void* env) const;
  friend struct JitTailCall;
  LeafEntry leaf_ = nullptr;  // x86jit::LeafFn
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A tail call's view of its target's code (jit.cpp).
struct JitTailCall {
  static const Jit::Impl& of(const Jit& jit);
};

}  // namespace userperf::bpf
