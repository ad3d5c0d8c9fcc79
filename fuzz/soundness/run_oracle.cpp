#include "run_oracle.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <alloca.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <new>
#include <random>

#include "bpf/jit/jit.hpp"
#include "bpf/perf/find_vma.hpp"
#include "bpf/perf/perf_event_ctx.hpp"
#include "bpf/perf/perf_helpers.hpp"
#include "bpf/runtime/bpf_object.hpp"
#include "program_generator.hpp"
#include "support/guarded_pages.hpp"

namespace userperf::soundness {

using bpf::CallContext;
using bpf::HelperFn;
using u64 = std::uint64_t;

bpf::ObjectImage campaign_image(const std::vector<bpf::Insn>& insns) {
  bpf::ObjectImage image;
  image.license = "GPL";
  image.maps = campaign_maps();
  bpf::ProgramImage program;
  program.name = "soundness";
  program.section = "perf_event";
  program.prog_type = BPF_PROG_TYPE_PERF_EVENT;
  program.insns = insns;
  image.programs.push_back(std::move(program));
  return image;
}

namespace {

// ---- helper misuse: each helper with memory arguments checks them against the run's regions
// before the real helper runs (the verifier promised they are inside). Only during interpreter
// runs: the JIT's unchecked code passes no regions.
bool g_checking = false;
std::vector<const bpf::Map*> g_maps;  // the loaded object's maps: what a map argument may be
char g_misuse[256];
std::array<HelperFn, 256> g_real{};

const bpf::Map* map_arg(u64 r1) {
  for (const bpf::Map* m : g_maps)
    if (reinterpret_cast<u64>(m) == r1) return m;
  return nullptr;
}

// Whether helper `id`'s memory arguments lie in the run's regions; false fills g_misuse.
bool arguments_ok(int id, const u64 (&r)[6], const CallContext& call) {
  auto mem = [&](int reg, u64 size, bool write) {
    if (size == 0 || call.may_access(r[reg], size, write)) return true;
    std::snprintf(g_misuse, sizeof g_misuse,
                  "helper %d: r%d=0x%llx size %llu (%s) outside the regions", id, reg,
                  static_cast<unsigned long long>(r[reg]), static_cast<unsigned long long>(size),
                  write ? "write" : "read");
    return false;
  };
  switch (id) {
    case BPF_FUNC_map_lookup_elem:
    case BPF_FUNC_map_update_elem:
    case BPF_FUNC_map_delete_elem: {
      const bpf::Map* m = map_arg(r[1]);
      if (m == nullptr) {
        std::snprintf(g_misuse, sizeof g_misuse, "helper %d: r1=0x%llx is no map", id,
                      static_cast<unsigned long long>(r[1]));
        return false;
      }
      return mem(2, m->spec().key_size, false) &&
             (id != BPF_FUNC_map_update_elem || mem(3, m->spec().value_size, false));
    }
    default:  // probe reads and get_current_comm: (dst, size)
      return mem(1, r[2] & 0xffffffffu, true);
  }
}

template <int Id>
u64 checked_helper(u64 r1, u64 r2, u64 r3, u64 r4, u64 r5, CallContext& call) {
  if (g_checking && !arguments_ok(Id, {0, r1, r2, r3, r4, r5}, call)) {
    call.abort = true;
    return 0;
  }
  return g_real[Id](r1, r2, r3, r4, r5, call);
}

std::vector<HelperFn> checked_helper_table() {
  std::vector<HelperFn> table = bpf::perf_event_helper_table();
  for (std::size_t i = 0; i < table.size() && i < g_real.size(); ++i) g_real[i] = table[i];
  auto wrap = [&](int id, HelperFn fn) {
    if (static_cast<std::size_t>(id) < table.size() && table[id] != nullptr) table[id] = fn;
  };
  wrap(BPF_FUNC_map_lookup_elem, checked_helper<BPF_FUNC_map_lookup_elem>);
  wrap(BPF_FUNC_map_update_elem, checked_helper<BPF_FUNC_map_update_elem>);
  wrap(BPF_FUNC_map_delete_elem, checked_helper<BPF_FUNC_map_delete_elem>);
  wrap(BPF_FUNC_probe_read, checked_helper<BPF_FUNC_probe_read>);
  wrap(BPF_FUNC_probe_read_str, checked_helper<BPF_FUNC_probe_read_str>);
  wrap(BPF_FUNC_probe_read_kernel, checked_helper<BPF_FUNC_probe_read_kernel>);
  wrap(BPF_FUNC_probe_read_kernel_str, checked_helper<BPF_FUNC_probe_read_kernel_str>);
  wrap(BPF_FUNC_probe_read_user, checked_helper<BPF_FUNC_probe_read_user>);
  wrap(BPF_FUNC_probe_read_user_str, checked_helper<BPF_FUNC_probe_read_user_str>);
  wrap(BPF_FUNC_get_current_comm, checked_helper<BPF_FUNC_get_current_comm>);
  return table;
}

// ---- SIGSEGV/SIGBUS: an access that escaped every check. Report the program and exit.
const std::string* g_report = nullptr;
const std::string* g_crash_path = nullptr;

void write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w <= 0) return;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void on_fault(int sig, siginfo_t* info, void*) {
  char head[128];
  // snprintf of integers only: no allocation on glibc.
  const int n = std::snprintf(head, sizeof head, "SOUNDNESS BUG: signal %d at address %p\n", sig,
                              info->si_addr);
  write_all(2, head, static_cast<std::size_t>(n));
  if (g_report != nullptr) {
    write_all(2, g_report->data(), g_report->size());
    if (g_crash_path != nullptr && !g_crash_path->empty()) {
      const int fd = open(g_crash_path->c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        write_all(fd, g_report->data(), g_report->size());
        close(fd);
      }
    }
  }
  _exit(3);
}

void install_fault_handler() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  struct sigaction sa {};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, nullptr);
  sigaction(SIGBUS, &sa, nullptr);
}

bool deterministic(const std::vector<bpf::Insn>& insns) {
  for (const bpf::Insn& insn : insns) {
    if (insn.code != (BPF_JMP | BPF_CALL) || insn.src_reg != 0) continue;
    if (insn.imm == BPF_FUNC_ktime_get_ns || insn.imm == BPF_FUNC_get_prandom_u32 ||
        insn.imm == BPF_FUNC_get_smp_processor_id)
      return false;
  }
  return true;
}

}  // namespace

// The interpreter's run from a native frame `depth` bytes deeper: its stack, and so every stack
// address the program sees, moves. A result that changes with it depends on a stack address
// (root may read a spilled pointer's bytes), which the JIT's stack does not share.
[[gnu::noinline]] bpf::RunResult run_deeper(const bpf::Interpreter& vm, std::uintptr_t ctx,
                                            std::span<const bpf::MemoryRegion> regions, void* env,
                                            std::size_t depth) {
  volatile char* pad = static_cast<volatile char*>(alloca(depth));
  pad[0] = 0;
  bpf::RunResult result = vm.run(ctx, 0, regions, env);
  pad[depth - 1] = 0;
  return result;
}

std::string last_line(const std::string& log) {
  std::size_t end = log.size();
  while (end > 0) {
    while (end > 0 && log[end - 1] == '\n') --end;
    const std::size_t start = log.rfind('\n', end == 0 ? 0 : end - 1);
    const std::size_t from = start == std::string::npos ? 0 : start + 1;
    std::string line = log.substr(from, end - from);
    // The statistics after the reason ("processed N insns ...") say nothing of it.
    if (!line.empty() && line.rfind("processed ", 0) != 0) return line;
    end = from;
  }
  return "";
}

// The run's memory: the context, the sample and the registers, each between guard pages.
struct SoundnessOracle::Memory {
  testing::GuardedPages ctx{sizeof(bpf::PerfEventRunCtx)};
  testing::GuardedPages sample{sizeof(core::SampleData)};
  testing::GuardedPages regs{sizeof bpf::kNoRegs};
  bpf::FoundVma vma;
  std::vector<HelperFn> helpers = checked_helper_table();
};

SoundnessOracle::SoundnessOracle() : memory_(std::make_unique<Memory>()) {
  install_fault_handler();
}
SoundnessOracle::~SoundnessOracle() = default;

OracleResult SoundnessOracle::check(const std::vector<bpf::Insn>& insns, int runs,
                                    std::uint64_t seed, const std::string& report,
                                    const std::string& crash_path) {
  OracleResult result;
  auto object = bpf::BpfObject::create(campaign_image(insns), nullptr);
  if (!object) {
    result.findings.push_back("maps: " + object.error().message);
    return result;
  }
  bpf::ProgramLoadOptions options;
  options.helpers = memory_->helpers;
  options.ctx_layout = &bpf::perf_event_ctx_layout();
  options.callback_helpers = {{BPF_FUNC_find_vma, &bpf::find_vma_driver()}};
  options.probe_read = &bpf::probe_read_synthetic;
  options.log_level = log_level_;
  auto loaded = bpf::LoadedProgram::load(*object, 0, options);
  if (!loaded) {
    result.error = loaded.error().code;
    result.reason = last_line(loaded.error().message);
    result.log = loaded.error().message;
    return result;
  }
  result.accepted = true;
  const bpf::LoadedProgram& program = **loaded;
  result.log = program.verdict().log;
  g_maps.clear();
  for (const auto& m : (*object)->maps()) g_maps.push_back(m.get());

  Memory& mem = *memory_;
  if (!mem.ctx.ok() || !mem.sample.ok() || !mem.regs.ok()) {
    result.findings.push_back("cannot map guarded memory");
    return result;
  }
  auto* sample = new (mem.sample.data()) core::SampleData();
  auto* regs = reinterpret_cast<std::uint64_t*>(mem.regs.data());
  auto* ctx = new (mem.ctx.data()) bpf::PerfEventRunCtx();
  ctx->sample = sample;
  ctx->regs = regs;
  ctx->task_layout = &program.object()->image().task_layout;
  ctx->vma = &mem.vma;
  // Narrower than the product's PerfEventRunRegions: only what the rewritten loads may read.
  auto span = [](const void* begin, std::size_t bytes) {
    const auto b = reinterpret_cast<std::uintptr_t>(begin);
    return bpf::MemoryRegion{b, b + bytes, false};
  };
  static_assert(offsetof(core::SampleData, period) == offsetof(core::SampleData, addr) + 8);
  const std::array<bpf::MemoryRegion, 3> regions = {span(ctx, sizeof(bpf::PerfEventCtxReads)),
                                                    span(&sample->addr, 16),
                                                    span(regs, sizeof bpf::kNoRegs)};

  g_report = &report;
  g_crash_path = &crash_path;
  std::mt19937_64 rng(seed);
  auto value = [&]() -> std::uint64_t {
    switch (rng() % 5) {
      case 0:
        return 0;
      case 1:
        return ~0ULL;
      case 2:
        return rng() % 512;
      case 3:
        return 1ULL << (rng() % 64);
      default:
        return rng();
    }
  };
  const bool compare_jit = program.jitted() && deterministic(insns);
  // The JIT's checked mode over the same verified, fixed-up program: every access checked
  // against the same regions, helpers given the run's regions as the interpreter gives them.
  std::unique_ptr<bpf::Jit> checked_jit;
  if (bpf::jit_supported()) {
    std::vector<bpf::Insn> fixed = program.verdict().insns;
    if (auto ok = bpf::fix_map_references(fixed, **object); !ok) {
      result.findings.push_back("map references: " + ok.error().message);
      return result;
    }
    bpf::JitOptions jit_options;
    jit_options.helpers = memory_->helpers;
    jit_options.checked = true;
    jit_options.probe_read = options.probe_read;
    jit_options.callback_helpers = options.callback_helpers;
    for (const auto& m : (*object)->maps()) jit_options.static_regions.push_back(m->value_region());
    auto compiled = bpf::Jit::load(fixed, std::move(jit_options));
    if (!compiled) {
      result.findings.push_back("checked JIT refused a verified program: " +
                                compiled.error().message);
      return result;
    }
    checked_jit = std::move(*compiled);
  }
  const auto& maps = (*object)->maps();
  for (int run = 0; run < runs; ++run) {
    // This run's contents: registers, sample, and each map's value (the hash's key 0 present or
    // not). Written again before the JIT's run so that both start alike.
    std::array<std::uint64_t, PERF_REG_X86_64_MAX> reg_values{};
    for (auto& v : reg_values) v = value();
    const std::uint64_t period = value(), addr = value();
    std::vector<std::vector<std::uint8_t>> values;
    for (const auto& m : maps) {
      std::vector<std::uint8_t> bytes(m->spec().value_size);
      for (auto& b : bytes) b = static_cast<std::uint8_t>(value());
      values.push_back(std::move(bytes));
    }
    const bool hash_present = rng() % 3 != 0;
    auto prepare = [&] {
      mem.sample.make_writable();
      mem.regs.make_writable();
      std::memcpy(regs, reg_values.data(), sizeof bpf::kNoRegs);
      sample->period = period;
      sample->addr = addr;
      const std::uint32_t key = 0;
      for (std::size_t i = 0; i < maps.size(); ++i) {
        if (maps[i]->spec().type == BPF_MAP_TYPE_HASH && !hash_present) {
          maps[i]->delete_elem(&key);
        } else {
          maps[i]->update_elem(&key, values[i].data(), BPF_ANY);
        }
      }
      mem.sample.make_read_only();
      mem.regs.make_read_only();
      mem.ctx.make_read_only();
    };
    // Each map's key-0 value after a run (empty when the key is absent): what the JIT's run must
    // leave too.
    const auto map_values = [&maps] {
      std::vector<std::vector<std::uint8_t>> out;
      for (const auto& m : maps) {
        const std::uint32_t key = 0;
        const auto* v = static_cast<const std::uint8_t*>(m->lookup(&key));
        out.emplace_back(v, v == nullptr ? v : v + m->spec().value_size);
      }
      return out;
    };
    prepare();
    g_checking = true;
    const bpf::RunResult ran =
        program.interpreter().run(reinterpret_cast<std::uintptr_t>(ctx), 0, regions, ctx);
    g_checking = false;
    ++result.runs;
    const std::vector<std::vector<std::uint8_t>> interpreted_maps = map_values();
    if (ran.status != bpf::RunStatus::kOk) {
      char line[384];
      std::snprintf(line, sizeof line, "run %d: interpreter %s at insn %u, address 0x%llx%s%s", run,
                    bpf::to_string(ran.status), ran.pc,
                    static_cast<unsigned long long>(ran.fault_addr),
                    ran.status == bpf::RunStatus::kAborted ? ": " : "",
                    ran.status == bpf::RunStatus::kAborted ? g_misuse : "");
      result.findings.push_back(line);
      break;  // the JIT would run the same unsound access unchecked
    }
    if (checked_jit) {
      prepare();
      g_checking = true;
      const bpf::RunResult checked =
          checked_jit->run(reinterpret_cast<std::uintptr_t>(ctx), 0, regions, ctx);
      g_checking = false;
      ++result.checked_jit_runs;
      if (checked.status != bpf::RunStatus::kOk) {
        char line[384];
        std::snprintf(line, sizeof line, "run %d: checked JIT %s at insn %u, address 0x%llx%s%s",
                      run, bpf::to_string(checked.status), checked.pc,
                      static_cast<unsigned long long>(checked.fault_addr),
                      checked.status == bpf::RunStatus::kAborted ? ": " : "",
                      checked.status == bpf::RunStatus::kAborted ? g_misuse : "");
        result.findings.push_back(line);
        break;
      }
    }
    if (!compare_jit) continue;
    prepare();
    g_checking = true;
    const bpf::RunResult moved = run_deeper(
        program.interpreter(), reinterpret_cast<std::uintptr_t>(ctx), regions, ctx, 1104);
    g_checking = false;
    // Maps that change with the stack's address (a pointer stored) are not compared either.
    if (moved.status != bpf::RunStatus::kOk || moved.r0 != ran.r0) continue;
    const bool maps_comparable = map_values() == interpreted_maps;
    prepare();
    const bpf::RunResult jitted = program.run(ctx, regions, ctx);
    ++result.jit_runs;
    const bool maps_differ = maps_comparable && map_values() != interpreted_maps;
    if (jitted.status != bpf::RunStatus::kOk || jitted.r0 != ran.r0 || maps_differ) {
      char line[256];
      std::snprintf(line, sizeof line, "run %d: JIT %s r0=0x%llx, interpreter r0=0x%llx%s", run,
                    bpf::to_string(jitted.status), static_cast<unsigned long long>(jitted.r0),
                    static_cast<unsigned long long>(ran.r0),
                    maps_differ ? "; a map's value differs" : "");
      result.findings.push_back(line);
    }
  }
  for (testing::GuardedPages* pages : {&mem.ctx, &mem.sample, &mem.regs}) pages->make_writable();
  g_report = nullptr;
  g_crash_path = nullptr;
  return result;
}

}  // namespace userperf::soundness
