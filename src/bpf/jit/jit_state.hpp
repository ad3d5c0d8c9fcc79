// The run's State that JIT code reads and writes through r12, the entry's signature, and the C++
// functions generated code calls (checked mode's access test, a tail call's resolution). Shared by
// the translation (translator.*) and the runtime side (jit.cpp, which defines both functions).
#pragma once

#include <cstddef>
#include <cstdint>

#include "bpf/isa/helper_call.hpp"
#include "bpf/isa/memory_region.hpp"
#include "bpf/vm/interpreter.hpp"

namespace userperf::bpf::x86jit {

// What the generated code reads and writes through r12. Standard layout: offsets are baked in.
struct State {
  CallContext call;
  MemoryRegion* call_regions;  // call.regions' storage; [0] is the active stack
  const MemoryRegion* run_regions;
  std::uint64_t run_count;
  const MemoryRegion* static_regions;
  std::uint64_t static_count;
  const MemoryRegion* shared_regions;  // inner maps of map-in-map slots (shared_regions.hpp)
  std::uint64_t shared_count;
  const HelperFn* helpers;
  std::uint64_t helper_count;
  std::uint64_t stack_top;  // the main function's r10
  std::uint64_t saved_rsp;
  std::uint64_t depth;
  std::uint64_t budget;
  std::uint64_t fault_addr;
  TailCallResolver tail_call;  // set when the program has TAIL_CALL ops
  std::uint64_t tail_r0;       // a target the interpreter ran: its r0
  int tail_calls;              // this run's, MAX_TAIL_CALL_CNT at most
  std::uint32_t pc;
  std::uint32_t status;
  ProbeRead probe_read;  // probe loads' read (JitOptions::probe_read)
};

using EntryFn = std::uint64_t (*)(std::uint64_t r1, std::uint64_t r2, State* state,
                                  std::uint64_t stack_top);
// A leaf's entry (Translator::leaf_prologue): its stack frame is its own.
using LeafFn = std::uint64_t (*)(std::uint64_t r1, std::uint64_t r2);

// Checked mode: the interpreter's test of one access. flags: 1 = write, 2 = atomic (aligned).
// stack_low: the lowest byte of the active frame (r10 - its size); the stack is
// [stack_low, stack_top).
bool check_access(State* st, std::uint64_t addr, std::uint64_t size, std::uint64_t flags,
                  std::uint64_t stack_low);

// A probe load (kModeProbeMem): vm's probe_load with the run's env; size_sign as PROBE_LDX's.
std::uint64_t probe_load_from_jit(State* st, std::uint64_t addr, std::uint64_t size_sign);

// A callback-calling helper's driver steps (interpreter.hpp's CallbackDriver): begin with the
// helper's r1..r5 in args, resume with the callback's r0; the step written to `step`, its `call`
// returned.
bool callback_begin_from_jit(State* st, const CallbackDriver* driver, const std::uint64_t* args,
                             CallbackStep* step, CallbackState* state);
bool callback_resume_from_jit(State* st, const CallbackDriver* driver, std::uint64_t r0,
                              CallbackStep* step, CallbackState* state);

enum class Stub : std::uint8_t { kBail, kBudget, kCallDepth, kBadHelper, kAborted, kCount };

// What JIT code does after bpf_tail_call's resolution (tail_call_from_jit): go on after the call
// (index out of range, the 34th call, an empty slot), return the interpreter's r0 (tail_r0) from
// the current function, or stop the run (the interpreter's target stopped: status set); any other
// value is the address of the target's first instruction, to jump to.
enum TailCallNext : std::uint64_t { kTailContinue = 0, kTailReturn = 1, kTailStop = 2 };
std::uint64_t tail_call_from_jit(State* st, std::uint64_t map, std::uint64_t index,
                                 std::uint64_t ctx);

}  // namespace userperf::bpf::x86jit
