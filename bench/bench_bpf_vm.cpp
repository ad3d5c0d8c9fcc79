// The interpreter against the same logic compiled natively, and (when bpf() is allowed) against
// the kernel's JIT through BPF_PROG_TEST_RUN on an XDP program.
//
//   BM_Prime_*   bpf_conformance's prime.data (is 67 prime?): a loop of div/mul/sub and jumps.
//                The suite's first line `mov %r1, 67` is dropped: the interpreter gets 67 in r1
//                so nothing can be folded. The kernel variant keeps `mov %r1, 67` (an XDP
//                program's r1 is its context).
//   BM_Filter_*  a 20-instruction sample filter over a bpf_perf_event_data-like context
//                (regs, sample_period at 168, addr at 176): loads, compares, ALU, returns 1.
//                The kernel variant reads the same fields from the packet after the bounds
//                check XDP requires (5 more instructions).
//   BM_PrimeBig_*  the same prime loop over 10,007 (a prime: the loop runs 10,005 times);
//                  interpreter vs JIT vs native (issue 16's loop-bound target: JIT <= 1.5x native).
//   BM_Xorshift_*  a 10-instruction xorshift64 loop of 10,000 iterations in r1.
//   BM_Hash256_*   FNV-1a over 256 bytes of memory (a load, xor, multiply per byte).
//   BM_ArraySum_*  the sum of 512 u64 in memory (as compiled by g++ -O2 for the native baseline).
//   *_Jit          the x86-64 JIT (src/bpf/jit), unchecked code as verified programs get it.
// Native baselines are noinline functions fed through benchmark::DoNotOptimize. bench/run.sh
// prints interpreter/native ratios (target <= 40x).
#include <benchmark/benchmark.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bpf/isa/assembler.hpp"
#include "bpf/jit/jit.hpp"
#include "bpf/vm/interpreter.hpp"
#include "support/kernel_bpf.hpp"

namespace {

using namespace userperf::bpf;

constexpr std::uint64_t kPrimeInput = 67;

constexpr const char* kPrimeAsm = R"(
    mov %r0, 0x1
    mov %r2, 0x2
    jgt %r1, 0x2, L3
  L1:
    ja exit
  L2:
    add %r2, 0x1
    mov %r0, 0x1
    jge %r2, %r1, exit
  L3:
    mov %r3, %r1
    div %r3, %r2
    mul %r3, %r2
    mov %r4, %r1
    sub %r4, %r3
    mov %r0, 0x0
    jne %r4, 0x0, L2
    exit
)";

// The filter body, over a context in r6 (shared by the interpreter and kernel variants).
constexpr const char* kFilterBody = R"(
    ldxdw %r2, [%r6+168]      # sample_period
    jlt %r2, 1000, drop
    ldxdw %r3, [%r6+176]      # addr
    mov %r4, %r3
    rsh %r4, 12
    and %r4, 0xff
    jeq %r4, 0x7f, drop       # one page class is not interesting
    ldxdw %r5, [%r6+128]      # regs->ip
    sub %r5, 0x400000
    jgt %r5, 0x100000, drop   # ip outside [0x400000, 0x500000]
    ldxdw %r7, [%r6+152]      # regs->sp
    and %r7, 0xf
    jne %r7, 0, drop          # misaligned stack
    ldxdw %r8, [%r6+80]       # regs->ax: a flag bit
    jset %r8, 0x1, drop
    mov %r0, 1
    exit
  drop:
    mov %r0, 0
    exit
)";

struct PerfEventData {  // struct bpf_perf_event_data on x86-64
  std::uint64_t regs[21];
  std::uint64_t sample_period;
  std::uint64_t addr;
};
static_assert(sizeof(PerfEventData) == 184);

PerfEventData sample_ctx() {
  PerfEventData ctx{};
  ctx.sample_period = 4000;
  ctx.addr = 0x7ffd12345000;
  ctx.regs[16] = 0x401234;        // ip
  ctx.regs[19] = 0x7ffd00001000;  // sp
  ctx.regs[10] = 2;               // ax
  return ctx;
}

__attribute__((noinline)) std::uint64_t native_prime(std::uint64_t n) {
  for (std::uint64_t i = 2; i < n; ++i) {
    if (n % i == 0) return 0;
  }
  return 1;
}

__attribute__((noinline)) std::uint64_t native_filter(const PerfEventData* ctx) {
  if (ctx->sample_period < 1000) return 0;
  if (((ctx->addr >> 12) & 0xff) == 0x7f) return 0;
  if (ctx->regs[16] - 0x400000 > 0x100000) return 0;
  if ((ctx->regs[19] & 0xf) != 0) return 0;
  if (ctx->regs[10] & 1) return 0;
  return 1;
}

std::unique_ptr<Interpreter> load(const std::string& text) {
  auto insns = assemble(text);
  if (!insns) return nullptr;
  auto interpreter = Interpreter::load(*insns, {});
  return interpreter ? std::move(*interpreter) : nullptr;
}

void BM_Prime_Interpreter(benchmark::State& state) {
  auto vm = load(kPrimeAsm);
  if (!vm) return state.SkipWithError("prime does not load");
  std::uint64_t n = kPrimeInput;
  for (auto _ : state) {
    benchmark::DoNotOptimize(n);
    RunResult result = vm->run(n, 0, {}, nullptr);
    if (result.r0 != 1) return state.SkipWithError("prime(67) != 1");
    benchmark::DoNotOptimize(result);
  }
}

void BM_Prime_Native(benchmark::State& state) {
  std::uint64_t n = kPrimeInput;
  for (auto _ : state) {
    benchmark::DoNotOptimize(n);
    std::uint64_t r = native_prime(n);
    if (r != 1) return state.SkipWithError("prime(67) != 1");
    benchmark::DoNotOptimize(r);
  }
}

void BM_Filter_Interpreter(benchmark::State& state) {
  auto vm = load(std::string("mov %r6, %r1\n") + kFilterBody);
  if (!vm) return state.SkipWithError("the filter does not load");
  PerfEventData ctx = sample_ctx();
  const auto begin = reinterpret_cast<std::uintptr_t>(&ctx);
  const MemoryRegion region{begin, begin + sizeof(ctx), false};
  for (auto _ : state) {
    benchmark::DoNotOptimize(ctx);
    RunResult result = vm->run(begin, 0, {&region, 1}, nullptr);
    if (result.status != RunStatus::kOk || result.r0 != 1) {
      return state.SkipWithError("filter != 1");
    }
    benchmark::DoNotOptimize(result);
  }
}

void BM_Filter_Native(benchmark::State& state) {
  PerfEventData ctx = sample_ctx();
  const PerfEventData* p = &ctx;
  for (auto _ : state) {
    benchmark::DoNotOptimize(p);
    std::uint64_t r = native_filter(p);
    if (r != 1) return state.SkipWithError("filter != 1");
    benchmark::DoNotOptimize(r);
  }
}

// The kernel's JIT through BPF_PROG_TEST_RUN (XDP): `repeat` runs per call; the kernel reports
// the mean duration per run, used as the iteration time. The iteration count is fixed: each
// iteration really takes `repeat` runs, which Google Benchmark's manual-time sizing ignores.
struct KernelProgram {
  userperf::testing::kernel_bpf::ScopedFd fd;
  std::string error;
};

KernelProgram load_kernel(const std::string& text) {
  KernelProgram program;
  auto insns = assemble(text);
  if (!insns) {
    program.error = insns.error().message;
    return program;
  }
  auto loaded = userperf::testing::kernel_bpf::prog_load(BPF_PROG_TYPE_XDP, *insns, "GPL");
  if (loaded.fd < 0) {
    program.error =
        std::string("BPF_PROG_LOAD: ") + std::strerror(loaded.error) + "\n" + loaded.log;
    return program;
  }
  program.fd = userperf::testing::kernel_bpf::ScopedFd(loaded.fd);
  return program;
}

// The mean ns per run, or -errno.
long long kernel_test_run(int fd, void* packet, std::uint32_t size, std::uint32_t repeat,
                          std::uint32_t* retval) {
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.test.prog_fd = static_cast<std::uint32_t>(fd);
  attr.test.data_in = reinterpret_cast<std::uintptr_t>(packet);
  attr.test.data_size_in = size;
  attr.test.repeat = repeat;
  if (syscall(SYS_bpf, BPF_PROG_TEST_RUN, &attr, sizeof(attr)) != 0) return -errno;
  *retval = attr.test.retval;
  return attr.test.duration;
}

void run_kernel(benchmark::State& state, const std::string& text, std::uint32_t expected,
                const void* packet_data, std::size_t packet_size) {
  KernelProgram program = load_kernel(text);
  if (program.fd.get() < 0) return state.SkipWithError(program.error.c_str());
  alignas(8) unsigned char packet[256] = {};
  std::memcpy(packet, packet_data, packet_size < sizeof(packet) ? packet_size : sizeof(packet));
  constexpr std::uint32_t kRepeat = 1000;
  for (auto _ : state) {
    std::uint32_t retval = 0;
    long long ns = kernel_test_run(program.fd.get(), packet, sizeof(packet), kRepeat, &retval);
    if (ns < 0) return state.SkipWithError(std::strerror(static_cast<int>(-ns)));
    if (retval != expected) return state.SkipWithError("unexpected kernel result");
    state.SetIterationTime(static_cast<double>(ns) * 1e-9);
  }
}

void BM_Prime_KernelJit(benchmark::State& state) {
  const std::uint64_t none = 0;
  run_kernel(state, std::string("mov %r1, 67\n") + kPrimeAsm, 1, &none, sizeof(none));
}

void BM_Filter_KernelJit(benchmark::State& state) {
  // r6 = the packet, after XDP's bounds check; the context lies at its start.
  const std::string text = std::string(R"(
    ldxw %r6, [%r1+0]
    ldxw %r2, [%r1+4]
    mov %r3, %r6
    add %r3, 184
    jgt %r3, %r2, drop
  )") + kFilterBody;
  PerfEventData ctx = sample_ctx();
  run_kernel(state, text, 1, &ctx, sizeof(ctx));
}

// bpf() is usable when a trivial XDP program loads.
bool kernel_bpf_available(std::string& why) {
  KernelProgram probe = load_kernel("mov %r0, 2\nexit");
  if (probe.fd.get() >= 0) return true;
  why = probe.error;
  return false;
}

}  // namespace

constexpr std::uint64_t kPrimeBigInput = 10007;
constexpr std::uint64_t kXorshiftIterations = 10000;

constexpr const char* kXorshiftAsm = R"(
    mov %r0, 88172645
  loop:
    mov %r2, %r0
    lsh %r2, 13
    xor %r0, %r2
    mov %r2, %r0
    rsh %r2, 7
    xor %r0, %r2
    mov %r2, %r0
    lsh %r2, 17
    xor %r0, %r2
    sub %r1, 1
    jne %r1, 0, loop
    exit
)";

__attribute__((noinline)) std::uint64_t native_xorshift(std::uint64_t n) {
  std::uint64_t x = 88172645;
  do {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  } while (--n != 0);
  return x;
}

std::unique_ptr<Jit> load_jit(const std::string& text) {
  auto insns = assemble(text);
  if (!insns) return nullptr;
  auto jit = Jit::load(*insns, {});
  return jit ? std::move(*jit) : nullptr;
}

template <class Tier>
void run_loop_bench(benchmark::State& state, const Tier& tier, std::uint64_t input,
                    std::uint64_t expect) {
  std::uint64_t n = input;
  for (auto _ : state) {
    benchmark::DoNotOptimize(n);
    RunResult result = tier.run(n, 0, {}, nullptr);
    if (result.r0 != expect) return state.SkipWithError("wrong result");
    benchmark::DoNotOptimize(result);
  }
}

void BM_PrimeBig_Interpreter(benchmark::State& state) {
  auto vm = load(kPrimeAsm);
  if (!vm) return state.SkipWithError("prime does not load");
  run_loop_bench(state, *vm, kPrimeBigInput, 1);
}
void BM_PrimeBig_Jit(benchmark::State& state) {
  auto jit = load_jit(kPrimeAsm);
  if (!jit) return state.SkipWithError("prime does not compile");
  run_loop_bench(state, *jit, kPrimeBigInput, 1);
}
void BM_PrimeBig_Native(benchmark::State& state) {
  std::uint64_t n = kPrimeBigInput;
  for (auto _ : state) {
    benchmark::DoNotOptimize(n);
    std::uint64_t r = native_prime(n);
    if (r != 1) return state.SkipWithError("prime(10007) != 1");
    benchmark::DoNotOptimize(r);
  }
}
void BM_Xorshift_Interpreter(benchmark::State& state) {
  auto vm = load(kXorshiftAsm);
  if (!vm) return state.SkipWithError("xorshift does not load");
  run_loop_bench(state, *vm, kXorshiftIterations, native_xorshift(kXorshiftIterations));
}
void BM_Xorshift_Jit(benchmark::State& state) {
  auto jit = load_jit(kXorshiftAsm);
  if (!jit) return state.SkipWithError("xorshift does not compile");
  run_loop_bench(state, *jit, kXorshiftIterations, native_xorshift(kXorshiftIterations));
}
void BM_Xorshift_Native(benchmark::State& state) {
  std::uint64_t n = kXorshiftIterations;
  for (auto _ : state) {
    benchmark::DoNotOptimize(n);
    std::uint64_t r = native_xorshift(n);
    benchmark::DoNotOptimize(r);
  }
}
void BM_Prime_Jit(benchmark::State& state) {
  auto jit = load_jit(kPrimeAsm);
  if (!jit) return state.SkipWithError("prime does not compile");
  run_loop_bench(state, *jit, kPrimeInput, 1);
}
void BM_Filter_Jit(benchmark::State& state) {
  auto jit = load_jit(std::string("mov %r6, %r1\n") + kFilterBody);
  if (!jit) return state.SkipWithError("the filter does not compile");
  PerfEventData ctx = sample_ctx();
  const auto begin = reinterpret_cast<std::uintptr_t>(&ctx);
  const MemoryRegion region{begin, begin + sizeof(ctx), false};
  for (auto _ : state) {
    benchmark::DoNotOptimize(ctx);
    RunResult result = jit->run(begin, 0, {&region, 1}, nullptr);
    if (result.status != RunStatus::kOk || result.r0 != 1) {
      return state.SkipWithError("filter != 1");
    }
    benchmark::DoNotOptimize(result);
  }
}

// Loops over memory: r1 = the buffer's address; the buffer is the run's one region.
constexpr const char* kHash256Asm = R"(
    lddw %r0, 0xcbf29ce484222325
    lddw %r3, 0x100000001b3
    mov %r4, %r1
    add %r4, 256
  loop:
    ldxb %r2, [%r1+0]
    xor %r0, %r2
    mul %r0, %r3
    add %r1, 1
    jlt %r1, %r4, loop
    exit
)";

constexpr const char* kArraySumAsm = R"(
    mov %r0, 0
    mov %r4, %r1
    add %r4, 4096
  loop:
    ldxdw %r2, [%r1+0]
    add %r0, %r2
    add %r1, 8
    jlt %r1, %r4, loop
    exit
)";

__attribute__((noinline)) std::uint64_t native_hash256(const std::uint8_t* p) {
  std::uint64_t h = 0xcbf29ce484222325;
  for (int i = 0; i < 256; ++i) {
    h ^= p[i];
    h *= 0x100000001b3;
  }
  return h;
}

__attribute__((noinline)) std::uint64_t native_array_sum(const std::uint64_t* p) {
  std::uint64_t sum = 0;
  for (int i = 0; i < 512; ++i) sum += p[i];
  return sum;
}

struct MemoryLoopInput {
  alignas(64) std::uint64_t words[512];
  MemoryLoopInput() {
    for (int i = 0; i < 512; ++i) words[i] = 0x9e3779b97f4a7c15ull * static_cast<unsigned>(i + 1);
  }
  std::uintptr_t address() const { return reinterpret_cast<std::uintptr_t>(words); }
  MemoryRegion region() const { return MemoryRegion{address(), address() + sizeof(words), false}; }
};

template <class Tier>
void run_memory_loop(benchmark::State& state, const Tier& tier, std::uint64_t expect) {
  const MemoryLoopInput input;
  const MemoryRegion region = input.region();
  std::uintptr_t address = input.address();
  for (auto _ : state) {
    benchmark::DoNotOptimize(address);
    RunResult result = tier.run(address, 0, {&region, 1}, nullptr);
    if (result.status != RunStatus::kOk || result.r0 != expect) {
      return state.SkipWithError("wrong result");
    }
    benchmark::DoNotOptimize(result);
  }
}

template <class Fn>
void run_native_memory_loop(benchmark::State& state, Fn fn) {
  const MemoryLoopInput input;
  const auto* p = input.words;
  for (auto _ : state) {
    benchmark::DoNotOptimize(p);
    std::uint64_t r = fn(p);
    benchmark::DoNotOptimize(r);
  }
}

std::uint64_t expected_hash256() {
  const MemoryLoopInput input;
  return native_hash256(reinterpret_cast<const std::uint8_t*>(input.words));
}

std::uint64_t expected_array_sum() {
  const MemoryLoopInput input;
  return native_array_sum(input.words);
}

void BM_Hash256_Interpreter(benchmark::State& state) {
  auto vm = load(kHash256Asm);
  if (!vm) return state.SkipWithError("hash256 does not load");
  run_memory_loop(state, *vm, expected_hash256());
}
void BM_Hash256_Jit(benchmark::State& state) {
  auto jit = load_jit(kHash256Asm);
  if (!jit) return state.SkipWithError("hash256 does not compile");
  run_memory_loop(state, *jit, expected_hash256());
}
void BM_Hash256_Native(benchmark::State& state) {
  run_native_memory_loop(state, [](const std::uint64_t* p) {
    return native_hash256(reinterpret_cast<const std::uint8_t*>(p));
  });
}
void BM_ArraySum_Interpreter(benchmark::State& state) {
  auto vm = load(kArraySumAsm);
  if (!vm) return state.SkipWithError("array sum does not load");
  run_memory_loop(state, *vm, expected_array_sum());
}
void BM_ArraySum_Jit(benchmark::State& state) {
  auto jit = load_jit(kArraySumAsm);
  if (!jit) return state.SkipWithError("array sum does not compile");
  run_memory_loop(state, *jit, expected_array_sum());
}
void BM_ArraySum_Native(benchmark::State& state) {
  run_native_memory_loop(state, [](const std::uint64_t* p) { return native_array_sum(p); });
}

// A chain of tail calls, as profilers' unwinders walk a stack one program per step: a program
// that adds 1 to the u64 at ctx and tail-calls itself through slot 0, 33 times (MAX_TAIL_CALL_CNT),
// then returns the count. Baseline: the same 34 steps as native calls through a pointer.
constexpr const char* kTailStepAsm = R"(
    mov %r6, %r2
    ldxdw %r0, [%r1+0]
    add %r0, 1
    stxdw [%r1+0], %r0
    mov %r2, %r6
    mov %r3, 0
    call bpf_tail_call
    ldxdw %r0, [%r1+0]
    exit
)";

struct TailTable {
  const Interpreter* vm = nullptr;
  const Jit* jit = nullptr;
};

TailCallSlot tail_slot(std::uint64_t map, std::uint32_t index) {
  const auto* table = reinterpret_cast<const TailTable*>(static_cast<std::uintptr_t>(map));
  if (index != 0) return {};
  return {true, table->vm, table->jit};
}

template <class Tier>
void run_tail_chain(benchmark::State& state, const Tier& tier, TailTable& table) {
  std::uint64_t counter = 0;
  const MemoryRegion region{reinterpret_cast<std::uintptr_t>(&counter),
                            reinterpret_cast<std::uintptr_t>(&counter) + sizeof(counter), true};
  for (auto _ : state) {
    counter = 0;
    RunResult result = tier.run(reinterpret_cast<std::uintptr_t>(&counter),
                                reinterpret_cast<std::uintptr_t>(&table), {&region, 1}, nullptr);
    if (result.status != RunStatus::kOk || result.r0 != 34) {
      return state.SkipWithError("wrong result");
    }
    benchmark::DoNotOptimize(result);
  }
}

// The step on the interpreter, or on the JIT (whose tail calls jump into the step's own code).
void run_tail_chain_on(benchmark::State& state, bool jit) {
  auto insns = assemble(kTailStepAsm);
  if (!insns) return state.SkipWithError("the step does not assemble");
  InterpreterOptions options;
  options.tail_call = &tail_slot;
  auto vm = Interpreter::load(*insns, options);
  if (!vm) return state.SkipWithError("the step does not load");
  TailTable table{vm->get(), nullptr};
  if (!jit) return run_tail_chain(state, **vm, table);
  JitOptions jit_options;
  jit_options.tail_call = &tail_slot;
  auto compiled = Jit::load(*insns, std::move(jit_options));
  if (!compiled) return state.SkipWithError("the step does not compile");
  table.jit = compiled->get();
  run_tail_chain(state, **compiled, table);
}
void BM_TailChain_Interpreter(benchmark::State& state) {
  run_tail_chain_on(state, false);
}
void BM_TailChain_Jit(benchmark::State& state) {
  run_tail_chain_on(state, true);
}
__attribute__((noinline)) std::uint64_t native_tail_step(std::uint64_t* counter) {
  return ++*counter;
}
void BM_TailChain_Native(benchmark::State& state) {
  std::uint64_t (*volatile step)(std::uint64_t*) = &native_tail_step;
  std::uint64_t counter = 0;
  for (auto _ : state) {
    counter = 0;
    for (int i = 0; i < 34; ++i) step(&counter);
    if (counter != 34) return state.SkipWithError("wrong result");
    benchmark::DoNotOptimize(counter);
  }
}

// bpf_loop over 1000 iterations with a callback that adds its index to a u64 at ctx; baseline:
// the same 1000 calls natively through a pointer. The lddw of the callback is made a function
// lddw by hand (the assembler has none).
std::vector<Insn> loop_sum_program() {
  auto insns = assemble(R"(
    mov %r3, %r1
    mov %r1, 1000
    lddw %r2, 0
    mov %r4, 0
    call bpf_loop
    exit
    ldxdw %r0, [%r2+0]
    add %r0, %r1
    stxdw [%r2+0], %r0
    mov %r0, 0
    exit
  )");
  if (!insns) return {};
  std::vector<Insn> program = *insns;
  program[2].src_reg = BPF_PSEUDO_FUNC;  // the lddw, at 2..3; the callback starts at 7
  program[2].imm = 7 - 2 - 1;
  return program;
}

template <class Tier>
void run_loop_sum(benchmark::State& state, const Tier& tier) {
  std::uint64_t sum = 0;
  const MemoryRegion region{reinterpret_cast<std::uintptr_t>(&sum),
                            reinterpret_cast<std::uintptr_t>(&sum) + sizeof(sum), true};
  for (auto _ : state) {
    sum = 0;
    RunResult result = tier.run(reinterpret_cast<std::uintptr_t>(&sum), 0, {&region, 1}, nullptr);
    if (result.status != RunStatus::kOk || result.r0 != 1000 || sum != 499500) {
      return state.SkipWithError("wrong result");
    }
    benchmark::DoNotOptimize(result);
  }
}

void BM_LoopSum_Interpreter(benchmark::State& state) {
  auto vm = Interpreter::load(loop_sum_program(), {});
  if (!vm) return state.SkipWithError("the loop does not load");
  run_loop_sum(state, **vm);
}
void BM_LoopSum_Jit(benchmark::State& state) {
  auto jit = Jit::load(loop_sum_program(), {});
  if (!jit) return state.SkipWithError("the loop does not compile");
  run_loop_sum(state, **jit);
}
__attribute__((noinline)) std::uint64_t native_loop_step(std::uint64_t index, std::uint64_t* sum) {
  *sum += index;
  return 0;
}
void BM_LoopSum_Native(benchmark::State& state) {
  std::uint64_t (*volatile step)(std::uint64_t, std::uint64_t*) = &native_loop_step;
  std::uint64_t sum = 0;
  for (auto _ : state) {
    sum = 0;
    for (std::uint64_t i = 0; i < 1000; ++i) {
      if (step(i, &sum) != 0) break;
    }
    if (sum != 499500) return state.SkipWithError("wrong result");
    benchmark::DoNotOptimize(sum);
  }
}

// JIT time: decode, translate, mmap, mprotect, munmap of one program.
void BM_JitCompile_Filter(benchmark::State& state) {
  auto insns = assemble(std::string("mov %r6, %r1\n") + kFilterBody);
  if (!insns) return state.SkipWithError("the filter does not assemble");
  for (auto _ : state) {
    auto jit = Jit::load(*insns, {});
    if (!jit) return state.SkipWithError("the filter does not compile");
    benchmark::DoNotOptimize(jit);
  }
}

BENCHMARK(BM_JitCompile_Filter);
BENCHMARK(BM_TailChain_Interpreter);
BENCHMARK(BM_TailChain_Jit);
BENCHMARK(BM_TailChain_Native);
BENCHMARK(BM_LoopSum_Interpreter);
BENCHMARK(BM_LoopSum_Jit);
BENCHMARK(BM_LoopSum_Native);
BENCHMARK(BM_PrimeBig_Interpreter);
BENCHMARK(BM_PrimeBig_Jit);
BENCHMARK(BM_PrimeBig_Native);
BENCHMARK(BM_Xorshift_Interpreter);
BENCHMARK(BM_Xorshift_Jit);
BENCHMARK(BM_Xorshift_Native);
BENCHMARK(BM_Hash256_Interpreter);
BENCHMARK(BM_Hash256_Jit);
BENCHMARK(BM_Hash256_Native);
BENCHMARK(BM_ArraySum_Interpreter);
BENCHMARK(BM_ArraySum_Jit);
BENCHMARK(BM_ArraySum_Native);
BENCHMARK(BM_Prime_Jit);
BENCHMARK(BM_Filter_Jit);
BENCHMARK(BM_Prime_Interpreter);
BENCHMARK(BM_Prime_Native);
BENCHMARK(BM_Filter_Interpreter);
BENCHMARK(BM_Filter_Native);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::string why;
  if (kernel_bpf_available(why)) {
    constexpr int kCalls = 200;
    benchmark::RegisterBenchmark("BM_Prime_KernelJit", BM_Prime_KernelJit)
        ->UseManualTime()
        ->Iterations(kCalls);
    benchmark::RegisterBenchmark("BM_Filter_KernelJit", BM_Filter_KernelJit)
        ->UseManualTime()
        ->Iterations(kCalls);
  } else {
    std::fprintf(stderr, "bench_bpf_vm: skipping the kernel JIT benchmarks: %s\n", why.c_str());
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
