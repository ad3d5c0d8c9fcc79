// The JIT's runtime side: load() (decode, translate, W^X mapping), run() (the State, the stack,
// the entry), tail calls' resolution into a target's code, and checked mode's access test. The
// translation itself is translator.* and translate_*.cpp; its frame layout is described there.
#include "bpf/jit/jit.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bpf/isa/shared_regions.hpp"
#include "bpf/jit/frames.hpp"
#include "bpf/jit/jit_state.hpp"
#include "bpf/jit/translator.hpp"
#include "bpf/vm/decoded_op.hpp"

namespace userperf::bpf {

using x86jit::EntryFn;
using x86jit::State;

namespace x86jit {

bool callback_begin_from_jit(State* st, const CallbackDriver* driver, const std::uint64_t* args,
                             CallbackStep* step, CallbackState* state) {
  std::uint64_t copy[5];
  std::memcpy(copy, args, sizeof copy);  // args lie in *step
  *step = driver->begin(copy, st->call.env, *state);
  return step->call;
}

bool callback_resume_from_jit(State* st, const CallbackDriver* driver, std::uint64_t r0,
                              CallbackStep* step, CallbackState* state) {
  *step = driver->resume(r0, st->call.env, *state);
  return step->call;
}

std::uint64_t probe_load_from_jit(State* st, std::uint64_t addr, std::uint64_t size_sign) {
  return probe_load(st->probe_read, st->call.env, addr, size_sign);
}

// Checked mode: the interpreter's test of one access. flags: 1 = write, 2 = atomic (aligned).
bool check_access(State* st, std::uint64_t addr, std::uint64_t size, std::uint64_t flags,
                  std::uint64_t stack_low) {
  const bool write = (flags & 1) != 0;
  bool ok = addr >= stack_low && addr <= st->stack_top - size;
  for (std::uint64_t i = 0; !ok && i < st->run_count; ++i)
    ok = st->run_regions[i].allows(addr, size, write);
  for (std::uint64_t i = 0; !ok && i < st->static_count; ++i)
    ok = st->static_regions[i].allows(addr, size, write);
  for (std::uint64_t i = 0; !ok && i < st->shared_count; ++i)
    ok = st->shared_regions[i].allows(addr, size, write);
  if (ok && (flags & 2) != 0 && addr % size != 0) ok = false;
  if (!ok) {
    st->status = static_cast<std::uint32_t>(RunStatus::kFault);
    st->fault_addr = addr;
  }
  return ok;
}

}  // namespace x86jit

bool jit_supported() {
#if defined(__x86_64__)
  return true;
#else
  return false;
#endif
}

bool jit_allowed_by_environment() {
  static const bool allowed = [] {
    const char* v = std::getenv("USERPERF_BPF_JIT");
    return !(v != nullptr && std::strcmp(v, "0") == 0);
  }();
  return allowed;
}

struct Jit::Impl {
  vm::Program program;
  JitOptions options;
  x86jit::Frames frames;
  void* code = nullptr;
  std::size_t mapped = 0;
  std::size_t code_size = 0;
  std::size_t main_offset = 0;  // the first instruction's code: where a tail call jumps
  ~Impl() {
    if (code != nullptr) munmap(code, mapped);
  }
};

const Jit::Impl& JitTailCall::of(const Jit& jit) {
  return *jit.impl_;
}

namespace x86jit {

#if defined(__x86_64__)
std::uint64_t tail_call_from_jit(State* st, std::uint64_t map, std::uint64_t index,
                                 std::uint64_t ctx) {
  // As the interpreter's op_TAIL_CALL: the index, then the count, then the slot.
  const TailCallSlot slot = st->tail_call(map, static_cast<std::uint32_t>(index));
  if (!slot.in_range || st->tail_calls >= kMaxTailCalls) return kTailContinue;
  ++st->tail_calls;
  if (slot.target == nullptr) return kTailContinue;
  if (slot.jit != nullptr) {
    const auto& target = JitTailCall::of(*slot.jit);
    st->call.statics = target.program.static_regions;
    st->helpers = target.program.helpers.data();
    st->helper_count = target.program.helpers.size();
    return reinterpret_cast<std::uintptr_t>(target.code) + target.main_offset;
  }
  // Only the interpreter runs the target: there, nested, with this run's regions and count.
  const RunResult result = vm::execute(
      vm::program_of(*slot.target), ctx, map,
      std::span<const MemoryRegion>(st->run_regions, st->run_count), st->call.env, &st->tail_calls);
  st->tail_r0 = result.r0;
  if (result.status == RunStatus::kOk) return kTailReturn;
  st->status = static_cast<std::uint32_t>(result.status);
  st->pc = result.pc;
  st->fault_addr = result.fault_addr;
  return kTailStop;
}
#endif

}  // namespace x86jit

Jit::Jit() : impl_(std::make_unique<Impl>()) {}
Jit::~Jit() = default;

Expected<std::unique_ptr<Jit>> Jit::load(std::span<const Insn> insns, JitOptions options) {
#if !defined(__x86_64__)
  (void)insns;
  (void)options;
  return make_error(ENOTSUP, "the eBPF JIT supports x86-64 only");
#else
  InterpreterOptions vm_options;
  vm_options.helpers = options.helpers;
  vm_options.static_regions = options.static_regions;
  vm_options.tail_call = options.tail_call;
  vm_options.callback_helpers = options.callback_helpers;
  auto program = vm::decode(insns, std::move(vm_options));
  if (!program) return program.error();
  if (options.checked && options.tail_call != nullptr) {
    return make_error(ENOTSUP, "tail calls are JIT-compiled for verified programs only");
  }
  auto frames = x86jit::lay_out_frames(*program, options.function_stacks);
  if (!frames) return frames.error();
  std::unique_ptr<Jit> jit(new Jit());
  Impl& impl = *jit->impl_;
  impl.program = std::move(*program);
  impl.options = std::move(options);
  impl.frames = std::move(*frames);
  x86jit::Translator translator(impl.program, impl.options, impl.frames);
  std::vector<std::uint8_t> code = translator.translate();
  impl.main_offset = translator.main_offset();
  // The code's pages, then the constant pool's (blinding): written, then the code read+exec and
  // the pool read-only, so no constant the program chose is ever executable.
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  if (page != x86jit::kPoolAlign) return make_error(ENOTSUP, "JIT code needs 4 KiB pages");
  const std::size_t code_mapped = (code.size() + page - 1) / page * page;
  const std::vector<std::uint64_t>& pool = translator.pool();
  const std::size_t pool_bytes = pool.size() * sizeof(std::uint64_t);
  const std::size_t mapped = code_mapped + (pool_bytes + page - 1) / page * page;
  void* mem = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return make_error(errno, "mmap for JIT code");
  std::memcpy(mem, code.data(), code.size());
  if (!pool.empty()) {
    std::memcpy(static_cast<std::uint8_t*>(mem) + translator.pool_offset(), pool.data(),
                pool_bytes);
  }
  if (mprotect(mem, code_mapped, PROT_READ | PROT_EXEC) != 0 ||
      (mapped > code_mapped && mprotect(static_cast<std::uint8_t*>(mem) + code_mapped,
                                        mapped - code_mapped, PROT_READ) != 0)) {
    const int err = errno;
    munmap(mem, mapped);
    return make_error(err, "mprotect of JIT code to read+exec, of its constants to read");
  }
  impl.code = mem;
  if (translator.leaf()) jit->leaf_ = reinterpret_cast<x86jit::LeafFn>(mem);
  impl.mapped = mapped;
  impl.code_size = code.size();
  return jit;
#endif
}

RunResult Jit::run_with_state(std::uint64_t r1, std::uint64_t r2,
                              std::span<const MemoryRegion> regions, void* env) const {
  const Impl& impl = *impl_;
  // The frames of the deepest chain (frames.hpp): 4 KB for programs that tail-call or nobody
  // verified, the verifier's measure otherwise (often a few dozen bytes).
  auto* stack = static_cast<std::uint8_t*>(__builtin_alloca(impl.frames.reserve));
  const std::uint64_t stack_top = reinterpret_cast<std::uintptr_t>(stack) + impl.frames.reserve;
  const auto entry = reinterpret_cast<EntryFn>(impl.code);
  // Helpers see the run's regions (the active stack first, then run()'s) and the program's statics:
  // built only when the program can call one, as the interpreter does.
  MemoryRegion* call_regions = nullptr;
  std::size_t count = 0;
  // Checked code's access test also admits the inner maps' values (helpers look there
  // themselves: CallContext::may_access).
  const std::span<const MemoryRegion> shared =
      impl.options.checked ? shared_regions() : std::span<const MemoryRegion>();
  if (impl.program.calls_helpers) {
    count = 1 + regions.size();
    call_regions = static_cast<MemoryRegion*>(__builtin_alloca(count * sizeof(MemoryRegion)));
    call_regions[0] = MemoryRegion{stack_top - impl.frames.of_op[0], stack_top, true};
    std::size_t n = 1;
    for (const MemoryRegion& r : regions) call_regions[n++] = r;
  }

  // Every field set one by one: `State st{}` compiled to a `rep stos`, 40% of run()'s time on the
  // overflow path (perf annotate of bench_bpf_handler).
  State st;
  st.call.env = env;
  st.call.regions = std::span<const MemoryRegion>(call_regions, count);
  st.call.statics = impl.program.static_regions;
  st.call.abort = false;
  st.call_regions = call_regions;
  st.run_regions = regions.data();
  st.run_count = regions.size();
  st.static_regions = impl.program.static_regions.data();
  st.static_count = impl.program.static_regions.size();
  st.shared_regions = shared.data();
  st.shared_count = shared.size();
  st.helpers = impl.program.helpers.data();
  st.helper_count = impl.program.helpers.size();
  st.stack_top = stack_top;
  st.saved_rsp = 0;
  st.depth = 0;
  st.budget = impl.options.budget;
  st.fault_addr = 0;
  st.tail_call = impl.program.tail_call;
  st.tail_r0 = 0;
  st.tail_calls = 0;
  st.pc = 0;
  st.status = static_cast<std::uint32_t>(RunStatus::kOk);
  st.probe_read = impl.options.probe_read;
  const std::uint64_t r0 = entry(r1, r2, &st, stack_top);
  const auto status = static_cast<RunStatus>(st.status);
  return RunResult{status, r0, status == RunStatus::kOk ? 0 : st.pc,
                   status == RunStatus::kFault ? st.fault_addr : 0};
}

std::size_t Jit::size() const {
  return impl_->program.ops.size();
}

std::size_t Jit::code_size() const {
  return impl_->code_size;
}

std::uint32_t Jit::stack_reserve() const {
  return impl_->frames.reserve;
}

std::span<const std::uint8_t> Jit::code() const {
  return {static_cast<const std::uint8_t*>(impl_->code), impl_->code_size};
}

}  // namespace userperf::bpf
