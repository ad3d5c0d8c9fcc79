// The interpreter: the reference execution tier. Every load, store and atomic is checked against
// the memory regions the run may touch (its stack, the regions passed to run(), and the static
// regions given at load), as a second line of defence behind the verifier.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "bpf/isa/helper_call.hpp"
#include "bpf/isa/insn.hpp"
#include "bpf/isa/memory_region.hpp"
#include "support/expected.hpp"

namespace userperf::bpf {

class Interpreter;
class Jit;
namespace vm {
struct Program;
const Program& program_of(const Interpreter& interpreter);
}  // namespace vm

// MAX_TAIL_CALL_CNT: tail calls one run may make; the 34th and later fall through.
inline constexpr int kMaxTailCalls = 33;
// The helper id of bpf_tail_call (BPF_FUNC_tail_call).
inline constexpr std::int32_t kTailCallHelperId = 12;
// The helper id of bpf_loop (BPF_FUNC_loop), which the interpreter runs itself: it calls the
// callback (an lddw src=BPF_PSEUDO_FUNC's function) once per iteration, in a frame of its own.
inline constexpr std::int32_t kLoopHelperId = 181;
// BPF_MAX_LOOPS: bpf_loop's largest nr_loops; more is -E2BIG.
inline constexpr std::uint32_t kMaxLoops = 1U << 23;

// A helper that calls a function of the program (bpf_loop, bpf_find_vma): the interpreter runs the
// callback in a frame of its own between the driver's steps (one mechanism for every such helper).
// A step either calls the callback with `args` as r1..r5 or ends the helper with `result`.
struct CallbackStep {
  bool call = false;
  std::uint64_t args[5] = {};
  std::uint64_t result = 0;
};
// The driver's own words, kept in the callback's frame between steps.
struct CallbackState {
  std::uint64_t words[3] = {};
};
struct CallbackDriver {
  int callback_arg;  // the argument register (1..5) holding the callback
  // At the call, with the helper's r1..r5 and the run's env. SIGNAL-SAFE.
  CallbackStep (*begin)(const std::uint64_t* args, void* env, CallbackState& state);
  // After each return of the callback (its r0). SIGNAL-SAFE.
  CallbackStep (*resume)(std::uint64_t r0, void* env, CallbackState& state);
};
// bpf_loop's driver (the interpreter's own).
const CallbackDriver& bpf_loop_driver();

// A probe load (kModeProbeMem, a load the verifier typed through a BTF pointer): reads `size`
// bytes of the synthetic kernel memory at `addr` into `dst`; false when that fails (the load then
// gives 0, as the kernel's exception table makes it). SIGNAL-SAFE.
using ProbeRead = bool (*)(void* env, std::uint64_t addr, void* dst, std::uint64_t size);
// One probe load as both tiers run it: `size_sign` is the byte count, | 0x80 when the load
// sign-extends (kModeProbeMemsx); 0 when `read` is nullptr or fails. SIGNAL-SAFE.
std::uint64_t probe_load(ProbeRead read, void* env, std::uint64_t addr, std::uint64_t size_sign);

// What bpf_tail_call(ctx, map, index) finds: whether index < the prog array's max_entries, and the
// program in that slot (nullptr: empty): its interpreter, and its JIT code when it has some (a
// JIT-compiled caller jumps into it; the interpreter always runs `target`).
struct TailCallSlot {
  bool in_range = false;
  const Interpreter* target = nullptr;
  const Jit* jit = nullptr;
};
// Resolves r2 (the prog array's address after the runtime's fix-up) and r3 (the index, as u32).
// SIGNAL-SAFE. The target must stay alive while any run may use it (the runtime's maps keep
// replaced programs alive).
using TailCallResolver = TailCallSlot (*)(std::uint64_t map, std::uint32_t index);

struct InterpreterOptions {
  // Helpers by kernel helper id (enum bpf_func_id); nullptr entries are unknown helpers.
  std::vector<HelperFn> helpers;
  // Memory every run may touch besides its stack and run()'s regions (map storage, global data).
  std::vector<MemoryRegion> static_regions;
  // Instructions a run may execute before it stops with kBudget; 0 = no limit (verified programs
  // terminate). Unverified programs (conformance files, fuzzing) set one.
  std::uint64_t instruction_budget = 0;
  // When set, helper 12 (bpf_tail_call) is the kernel's tail call: the program in the slot
  // replaces the running one (same ctx, same frame, registers kept) and never returns to it; an
  // index out of range, the 34th tail call of a run or an empty slot continues after the call
  // with every register unchanged (the verifier makes r0..r5 unreadable there). Unset: helper 12
  // is looked up in `helpers` like any other.
  TailCallResolver tail_call = nullptr;
  // Helpers other than bpf_loop that call a callback, by id (bpf_find_vma: the perf layer's).
  std::vector<std::pair<std::int32_t, const CallbackDriver*>> callback_helpers;
  // Probe loads; nullptr: every probe load gives 0.
  ProbeRead probe_read = nullptr;
};

enum class RunStatus : std::uint8_t {
  kOk,         // exit from the main function; r0 is the result
  kFault,      // a memory access outside every region, or a write to a read-only one
  kBudget,     // instruction_budget exhausted
  kCallDepth,  // more than kMaxCallFrames frames
  kBadHelper,  // a call to a helper id with no function
  kAborted,    // a helper set CallContext::abort; r0 is its return value
};

struct RunResult {
  RunStatus status = RunStatus::kOk;
  std::uint64_t r0 = 0;
  std::uint32_t pc = 0;           // the instruction that stopped the run (not kOk)
  std::uintptr_t fault_addr = 0;  // kFault: the address accessed
};

const char* to_string(RunStatus status);

class Interpreter {
 public:
  // Checks the program's structure (known opcodes and reserved fields, jumps and local calls
  // inside the program, complete lddw pairs with src_reg 0, or BPF_PSEUDO_FUNC for a function's
  // address, a last instruction that cannot fall through) and prepares it for fast dispatch.
  // Helper 181 (bpf_loop) is the interpreter's own: bpf_loop(nr_loops, callback, ctx, flags)
  // as the kernel's (flags != 0: -EINVAL; nr_loops > kMaxLoops: -E2BIG; callback(index, ctx)
  // returning non-zero stops; the result is the number of calls). A callback that is not the
  // target of a function lddw stops the run with kBadHelper. A bad program is an error naming the
  // instruction index; nothing runs.
  static Expected<std::unique_ptr<Interpreter>> load(std::span<const Insn> insns,
                                                     InterpreterOptions options);
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Runs with r1, r2 as given and r10 at the top of a fresh stack of kMaxStack bytes per frame.
  // `regions` are this run's own (ctx, input memory). SIGNAL-SAFE: no allocation, locks or
  // syscalls (helpers may make their own). Reentrant: a nested run (a signal handler interrupting
  // a run on the same thread) has its own stack and state.
  RunResult run(std::uint64_t r1, std::uint64_t r2, std::span<const MemoryRegion> regions,
                void* env) const;

  std::size_t size() const;  // instructions

 private:
  Interpreter();
  friend const vm::Program& vm::program_of(const Interpreter&);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace userperf::bpf
