// The fuzz targets' run of a verified perf_event program, as the overflow path runs it (ctx loads
// rewritten, the perf helpers, the sample as the context) on both tiers with the same maps:
// the checked interpreter, the JIT's run() and, for a JIT leaf, its leaf entry (what
// BpfOverflowHandler calls for most filters). The context, the sample and the registers each end
// at a PROT_NONE page, so an overread the interpreter's region checks or the JIT's unchecked code
// let through faults at once.
//
// What is checked, per run: the interpreter never stops a verified program (a fault, a bad helper,
// too many frames: the verifier let through what it should not have); and the tiers agree on r0
// and on what the maps hold afterwards (array and hash maps by key, ring buffer records by
// payload; large arrays by a digest of their storage, large hashes not at all). Tiers
// are compared only for runs that are reproducible: the interpreter runs twice, the second time
// deeper on the native stack over differently painted stack bytes and with the context at another
// address, and a program whose result changes (it reads uninitialised stack, which privileged
// programs may, returns or stores a stack or ctx address, asks for the time or a random number) is
// counted as unstable instead. Maps are put back to their contents before the first run between
// runs.
#pragma once

#include <alloca.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "bpf/isa/disassembler.hpp"
#include "bpf/maps/map.hpp"
#include "bpf/maps/ringbuf_map.hpp"
#include "bpf/perf/find_vma.hpp"
#include "bpf/perf/perf_event_ctx.hpp"
#include "bpf/perf/perf_helpers.hpp"
#include "bpf/runtime/base_helpers.hpp"
#include "bpf/runtime/bpf_object.hpp"

namespace userperf::fuzz {

// `bytes` of zeroed memory that end where a PROT_NONE page begins (one guards the start too).
// `flipped`: placed instead where address bits 3..11 are the complement of the default place's,
// for a run that must see other pointer values (a program computing with the low bits of its ctx
// pointer is then seen to depend on it).
class GuardedBytes {
 public:
  explicit GuardedBytes(std::size_t bytes, bool flipped = false) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t pages = (bytes + page - 1) / page * page;
    total_ = pages + 2 * page;
    void* base = mmap(nullptr, total_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED ||
        mprotect(static_cast<char*>(base) + page, pages, PROT_READ | PROT_WRITE) != 0) {
      std::perror("fuzz: guarded mmap");
      std::abort();
    }
    base_ = base;
    std::size_t offset = pages - bytes;
    if (flipped) offset = (offset & ~std::size_t{0xfff}) | ((offset & 0xfff) ^ 0xff8);
    if (offset + bytes > pages) {
      std::fprintf(stderr, "fuzz: %zu bytes cannot be placed flipped\n", bytes);
      std::abort();
    }
    data_ = static_cast<char*>(base) + page + offset;
  }
  ~GuardedBytes() { munmap(base_, total_); }
  GuardedBytes(const GuardedBytes&) = delete;
  GuardedBytes& operator=(const GuardedBytes&) = delete;
  void* data() const { return data_; }

 private:
  void* base_ = nullptr;
  void* data_ = nullptr;
  std::size_t total_ = 0;
};

// One overflow's context in guarded memory: what r1 points at, the sample and the registers.
class GuardedOverflow {
 public:
  GuardedOverflow(const core::SampleData& sample, const std::uint64_t (&regs)[PERF_REG_X86_64_MAX],
                  core::Event* event, const bpf::KernelTaskLayout* task_layout,
                  bool flipped = false)
      : ctx_bytes_(sizeof(bpf::PerfEventRunCtx), flipped),
        sample_bytes_(sizeof(core::SampleData), flipped),
        regs_bytes_(sizeof regs, flipped) {
    sample_ = new (sample_bytes_.data()) core::SampleData(sample);
    std::memcpy(regs_bytes_.data(), regs, sizeof regs);
    ctx_ = new (ctx_bytes_.data()) bpf::PerfEventRunCtx{
        sample_, static_cast<const std::uint64_t*>(regs_bytes_.data()), event, task_layout, &vma_};
  }
  bpf::PerfEventRunCtx* ctx() const { return ctx_; }

 private:
  GuardedBytes ctx_bytes_, sample_bytes_, regs_bytes_;
  core::SampleData* sample_ = nullptr;
  bpf::PerfEventRunCtx* ctx_ = nullptr;
  bpf::FoundVma vma_;
};

// Once a process, before the first input: per-CPU maps and bpf_get_smp_processor_id see one CPU
// across the runs they compare; bpf_trace_printk's lines go nowhere; the JIT is not turned off.
inline void prepare_tier_runs() {
  unsetenv("USERPERF_BPF_JIT");
  bpf::set_trace_printk_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(sched_getcpu(), &set);
  (void)sched_setaffinity(0, sizeof set, &set);
}

// A sample as the PMU gives one, with every register set (values from `seed`).
struct FuzzSample {
  core::SampleData sample;
  std::uint64_t regs[PERF_REG_X86_64_MAX] = {};
  explicit FuzzSample(std::uint64_t ip, std::uint64_t addr, std::uint64_t period) {
    sample.ip = ip;
    sample.addr = addr;
    sample.period = period;
    sample.pid = static_cast<std::uint32_t>(getpid());
    sample.tid = sample.pid;
    for (int i = 0; i < PERF_REG_X86_64_MAX; ++i) {
      regs[i] = ip ^ (static_cast<std::uint64_t>(i + 1) * 0x9e3779b97f4a7c15ull);
    }
  }
};

// The event that overflowed, as the perf helpers read it: a software cpu-clock sampling event.
inline core::Event& fuzz_event() {
  static core::Event* event = [] {
    auto* e = new core::Event();
    e->attr.type = PERF_TYPE_SOFTWARE;
    e->attr.config = PERF_COUNT_SW_CPU_CLOCK;
    e->attr.size = sizeof e->attr;
    e->attr.sample_period = 1000;
    e->attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD;
    e->pid = getpid();
    return e;
  }();
  return *event;
}

// Descriptors stored in PERF_EVENT_ARRAY and map-in-map slots: the fuzz targets store none.
class NoDescriptors : public bpf::ProgResolver {
 public:
  Expected<void*> get(int) override { return make_error(EBADF, "no descriptors while fuzzing"); }
  void put(void*) override {}
  std::uint32_t prog_type(void*) override { return 0; }
  std::uint32_t prog_id(void*) override { return 0; }
};

// The runtime's load options for perf_event programs, as BpfRegistry::load_into sets them.
inline bpf::ProgramLoadOptions perf_event_load_options() {
  bpf::ProgramLoadOptions options;
  options.helpers = bpf::perf_event_helper_table();
  options.ctx_layout = &bpf::perf_event_ctx_layout();
  options.callback_helpers = {{BPF_FUNC_find_vma, &bpf::find_vma_driver()}};
  options.probe_read = &bpf::probe_read_synthetic;
  options.jit = true;
  options.say_fallback = false;
  options.log_level = 0;
  // A walk to the kernel's 1,000,000 processed instructions takes tens of seconds under the
  // sanitizers: an input that loops that long would stall the campaign. The fuzz targets reject
  // programs past this many (E2BIG), enough for every seed.
  options.verifier_insn_limit = 20000;
  return options;
}

using Bytes = std::vector<std::uint8_t>;

// What a map holds, as a consumer sees it: entries by key (sorted), or ring buffer records.
struct MapContents {
  std::vector<std::pair<Bytes, Bytes>> entries;
  std::vector<std::pair<int, Bytes>> records;  // state, payload
  std::uint64_t storage_digest = 0;            // a large array: a digest of its value storage
  bool operator==(const MapContents&) const = default;
};

// Keyed maps with more entries, or more value bytes in all, are not read key by key (an input can
// declare millions of entries, or an array of one value of up to INT_MAX bytes, as the kernel's
// array_map_alloc_check allows: copies of an 855 MB value made a 2026-11-29 run run out of memory):
// arrays of up to kLargestDigested bytes are compared by a digest of their storage and put back by
// clearing it (their initial contents are zeros: only single-entry global data has initial
// bytes), larger ones and such hashes not at all.
inline constexpr std::uint32_t kEntriesReadByKey = 4096;
inline constexpr std::uint64_t kLargestDigested = 16 << 20;

inline bool keyed_map(std::uint32_t type) {
  switch (type) {
    case BPF_MAP_TYPE_ARRAY:
    case BPF_MAP_TYPE_PERCPU_ARRAY:
    case BPF_MAP_TYPE_HASH:
    case BPF_MAP_TYPE_PERCPU_HASH:
    case BPF_MAP_TYPE_LRU_HASH:
    case BPF_MAP_TYPE_LRU_PERCPU_HASH:
      return true;
    default:
      return false;
  }
}

inline bool hash_map(std::uint32_t type) {
  return keyed_map(type) && type != BPF_MAP_TYPE_ARRAY && type != BPF_MAP_TYPE_PERCPU_ARRAY;
}

inline bool read_by_key(const bpf::Map& map) {
  const std::uint64_t entries = map.spec().max_entries;
  return entries <= kEntriesReadByKey && entries * map.user_value_size() <= kLargestDigested;
}

inline bool digested_array(bpf::Map& map) {
  const bpf::MemoryRegion storage = map.value_region();
  return !read_by_key(map) && !hash_map(map.spec().type) &&
         storage.end - storage.begin <= kLargestDigested;
}

inline std::uint64_t storage_digest(bpf::Map& map) {
  const bpf::MemoryRegion storage = map.value_region();
  std::uint64_t digest = 0xcbf29ce484222325ull;
  for (std::uintptr_t p = storage.begin; p + 8 <= storage.end; p += 8) {
    std::uint64_t word;
    std::memcpy(&word, reinterpret_cast<const void*>(p), sizeof word);
    digest = (digest ^ word) * 0x100000001b3ull;
  }
  return digest;
}

// Reads a keyed map's entries, or drains a ring buffer (its consumer moves past what it read).
inline MapContents read_map(bpf::Map& map) {
  MapContents out;
  const bpf::MapSpec& spec = map.spec();
  if (spec.type == BPF_MAP_TYPE_RINGBUF) {
    auto& ring = static_cast<bpf::RingbufMap&>(map);
    const std::uint64_t start = ring.consumer_pos();
    std::uint64_t pos = start;
    for (int i = 0; i < 100000; ++i) {
      const bpf::RingbufRecord record = ring.record_at(pos);
      if (record.state == bpf::RingbufRecord::State::kEmpty) break;
      const auto* p = static_cast<const std::uint8_t*>(record.data);
      out.records.emplace_back(
          static_cast<int>(record.state),
          record.state == bpf::RingbufRecord::State::kBusy ? Bytes{} : Bytes(p, p + record.size));
      if (record.state == bpf::RingbufRecord::State::kBusy) break;  // a leaked reservation
      pos = record.next_pos;
    }
    ring.set_consumer_pos(pos);
    // A reserved record holds whatever the ring held there before until the program writes it
    // (the kernel does not clear it either): with the ring empty, clear the bytes these records
    // took, so that each run's records start from zeros wherever in the ring they land. Only
    // those: clearing the whole ring at every read timed out on a ring of hundreds of MiB.
    if (pos == ring.producer_pos() && pos != start) {
      auto* data = reinterpret_cast<std::uint8_t*>(ring.value_region().begin);
      const std::uint64_t size = ring.data_size();
      const std::uint64_t used = std::min(pos - start, size);
      const std::uint64_t from = start & (size - 1);
      const std::uint64_t to_end = std::min(used, size - from);
      std::memset(data + from, 0, to_end);
      std::memset(data, 0, used - to_end);
    }
    return out;
  }
  if (!keyed_map(spec.type)) return out;
  if (!read_by_key(map)) {
    if (digested_array(map)) out.storage_digest = storage_digest(map);
    return out;
  }
  Bytes key(spec.key_size), next(spec.key_size), value(map.user_value_size());
  bool first = true;
  for (std::uint32_t n = 0; n <= spec.max_entries; ++n) {
    if (map.get_next_key(first ? nullptr : key.data(), next.data()) != 0) break;
    first = false;
    key = next;
    if (map.lookup_elem(key.data(), value.data()) == 0) out.entries.emplace_back(key, value);
  }
  std::sort(out.entries.begin(), out.entries.end());
  return out;
}

// Puts a keyed map back to `initial` (only when it changed: a frozen map refuses updates).
inline void restore_map(bpf::Map& map, const MapContents& initial) {
  if (!keyed_map(map.spec().type)) return;
  const MapContents now = read_map(map);
  if (now == initial) return;
  if (!read_by_key(map)) {
    if (!digested_array(map)) return;
    const bpf::MemoryRegion storage = map.value_region();
    std::memset(reinterpret_cast<void*>(storage.begin), 0, storage.end - storage.begin);
    if (!(read_map(map) == initial)) {
      std::fprintf(stderr, "fuzz: cannot restore map '%s'\n", map.spec().name.c_str());
      std::abort();
    }
    return;
  }
  if (hash_map(map.spec().type)) {
    for (const auto& [key, value] : now.entries) (void)map.delete_elem(key.data());
  }
  for (const auto& [key, value] : initial.entries) {
    if (map.update_elem(key.data(), value.data(), BPF_ANY) != 0) {
      std::fprintf(stderr, "fuzz: cannot restore map '%s'\n", map.spec().name.c_str());
      std::abort();
    }
  }
}

struct TierOutcome {
  bpf::RunStatus status = bpf::RunStatus::kOk;
  std::uint64_t r0 = 0;
  std::uint32_t pc = 0;
  std::vector<MapContents> maps;
  bool operator==(const TierOutcome& o) const {
    return status == o.status && r0 == o.r0 && maps == o.maps;
  }
};

struct TierStats {
  std::uint64_t runs = 0;      // programs run on the tiers
  std::uint64_t compared = 0;  // reproducible runs whose tiers were compared
  std::uint64_t unstable = 0;  // not reproducible: not compared
  std::uint64_t no_jit = 0;    // accepted programs the JIT did not translate
};

inline TierStats& tier_stats() {
  static TierStats stats;
  static const bool printed_at_exit = [] {
    std::atexit([] {
      const TierStats& s = tier_stats();
      std::fprintf(
          stderr,
          "bpf tiers: %llu programs run, %llu compared, %llu unstable, %llu not "
          "jitted\n",
          static_cast<unsigned long long>(s.runs), static_cast<unsigned long long>(s.compared),
          static_cast<unsigned long long>(s.unstable), static_cast<unsigned long long>(s.no_jit));
    });
    return true;
  }();
  (void)printed_at_exit;
  return stats;
}

enum class Tier { kInterpreter, kJit, kJitLeaf };

// Fills the native stack below the caller with `byte`: the frames a run is about to use.
[[gnu::noinline]] inline void paint_stack(std::uint8_t byte) {
  volatile std::uint8_t area[16384];
  std::memset(const_cast<std::uint8_t*>(area), byte, sizeof area);
  asm volatile("" : : "r"(area) : "memory");
}

[[gnu::noinline]] inline TierOutcome run_tier(const bpf::LoadedProgram& program, Tier tier,
                                              const GuardedOverflow& overflow) {
  bpf::PerfEventRunCtx* ctx = overflow.ctx();
  const bpf::PerfEventRunRegions regions(*ctx);
  const auto r1 = reinterpret_cast<std::uintptr_t>(ctx);
  bpf::RunResult result;
  switch (tier) {
    case Tier::kInterpreter:
      result = program.interpreter().run(r1, 0, regions.regions, ctx);
      break;
    case Tier::kJit:
      result = program.jit_code()->run(r1, 0, regions.regions, ctx);
      break;
    case Tier::kJitLeaf:
      // The same pointer, read as the two-word PerfEventCtxReads the overflow path passes (its
      // members are the context's first two): a program comparing its ctx pointer with a number
      // (root may) then takes the interpreter's branch. Given the stack object that the overflow
      // path would pass, one took the other branch (a 2026-11-29 campaign stop).
      result.r0 = program.jit_code()->leaf_entry()(r1, 0);
      break;
  }
  TierOutcome outcome;
  outcome.status = result.status;
  outcome.r0 = result.r0;
  outcome.pc = result.pc;
  return outcome;
}

// The same run from a frame `shift` bytes deeper, over stack bytes painted `paint`.
[[gnu::noinline]] inline TierOutcome run_tier_at(const bpf::LoadedProgram& program, Tier tier,
                                                 const GuardedOverflow& overflow, std::size_t shift,
                                                 std::uint8_t paint) {
  void* gap = alloca(shift + 16);
  asm volatile("" : : "r"(gap) : "memory");
  paint_stack(paint);
  return run_tier(program, tier, overflow);
}

[[noreturn]] inline void tier_failure(const char* what, const bpf::LoadedProgram& program,
                                      const TierOutcome& a, const TierOutcome& b) {
  std::fprintf(stderr,
               "bpf tiers: %s\n  interpreter: %s r0=%#llx pc=%u\n  other:       %s r0=%#llx "
               "pc=%u\n  maps equal: %d\nprogram as run (ctx loads rewritten):\n%s\n",
               what, bpf::to_string(a.status), static_cast<unsigned long long>(a.r0), a.pc,
               bpf::to_string(b.status), static_cast<unsigned long long>(b.r0), b.pc,
               a.maps == b.maps, bpf::disassemble(program.verdict().insns).c_str());
  // Where the maps differ: each differing entry's key and both values, in hex.
  const auto hex = [](const Bytes& bytes) {
    std::string out;
    char digits[4];
    for (const std::uint8_t b : bytes) {
      std::snprintf(digits, sizeof digits, "%02x", b);
      out += digits;
    }
    return out;
  };
  for (std::size_t m = 0; m < a.maps.size() && m < b.maps.size(); ++m) {
    const auto& x = a.maps[m].entries;
    const auto& y = b.maps[m].entries;
    for (std::size_t e = 0; e < x.size() || e < y.size(); ++e) {
      if (e < x.size() && e < y.size() && x[e] == y[e]) continue;
      std::fprintf(stderr, "  map %zu entry %zu: %s=%s | %s=%s\n", m, e,
                   e < x.size() ? hex(x[e].first).c_str() : "-",
                   e < x.size() ? hex(x[e].second).c_str() : "-",
                   e < y.size() ? hex(y[e].first).c_str() : "-",
                   e < y.size() ? hex(y[e].second).c_str() : "-");
    }
    if (a.maps[m].records != b.maps[m].records)
      std::fprintf(stderr, "  map %zu: records differ\n", m);
    if (a.maps[m].storage_digest != b.maps[m].storage_digest) {
      std::fprintf(stderr, "  map %zu: storage digests differ\n", m);
    }
  }
  std::abort();
}

// Whether the program calls bpf_trace_printk, whose arguments 3 to 5 the verifier does not check
// (ARG_DONTCARE, as in the kernel's bpf_trace_printk_proto): a program may pass a register no
// instruction wrote, or one a call clobbered, and print it. The interpreter's such registers hold
// what they held (0 at first), the JIT's what the native code left there, the kernel's whatever
// its stack held: the output (and the length trace_printk returns) is no tier's to reproduce.
// Found by a campaign (2026-11-29): a mutated format "period %llu %ddr %llx" read r5.
inline bool passes_unchecked_registers(const bpf::LoadedProgram& program) {
  constexpr std::int32_t kTracePrintk = 6;  // BPF_FUNC_trace_printk
  for (const bpf::Insn& insn : program.verdict().insns) {
    if (insn.code == (BPF_JMP | BPF_CALL) && insn.src_reg == 0 && insn.imm == kTracePrintk) {
      return true;
    }
  }
  return false;
}

// Runs `program` (loaded with perf_event_load_options) on every tier over `sample` and checks the
// invariants above. The second interpreter run gets its own copy of the context (another address,
// its bits 3..11 flipped:
// a program that computes with its ctx pointer is not reproducible; the JIT's leaf entry reads the
// same context as the two words of PerfEventCtxReads). The object's maps hold
// what they held before when this returns.
inline void run_and_compare(const bpf::LoadedProgram& program, const FuzzSample& sample,
                            core::Event& event) {
  const bpf::KernelTaskLayout* task_layout = &program.object()->image().task_layout;
  const GuardedOverflow overflow(sample.sample, sample.regs, &event, task_layout);
  const GuardedOverflow elsewhere(sample.sample, sample.regs, &event, task_layout, true);
  TierStats& stats = tier_stats();
  ++stats.runs;
  const auto& maps = program.object()->maps();
  std::vector<MapContents> initial;
  for (const auto& map : maps) initial.push_back(read_map(*map));
  const auto finish = [&](TierOutcome& outcome) {
    for (std::size_t i = 0; i < maps.size(); ++i) {
      outcome.maps.push_back(read_map(*maps[i]));
      restore_map(*maps[i], initial[i]);
    }
  };
  TierOutcome first = run_tier_at(program, Tier::kInterpreter, overflow, 0, 0x00);
  finish(first);
  if (first.status != bpf::RunStatus::kOk && first.status != bpf::RunStatus::kAborted) {
    tier_failure("the interpreter stopped a verified program", program, first, first);
  }
  // 1104 bytes deeper, not 1024: the stack's low byte changes too (bits 4-7; a program may
  // sign-extend it, movsx8 of r10 - 64, which a 2026-11-29 CI run found the JIT "disagreeing" on).
  TierOutcome second = run_tier_at(program, Tier::kInterpreter, elsewhere, 1104, 0xa5);
  finish(second);
  const bool stable = first == second && !passes_unchecked_registers(program);
  const bpf::Jit* jit = program.jit_code();
  if (jit == nullptr) {
    ++stats.no_jit;
    return;
  }
  TierOutcome jitted = run_tier_at(program, Tier::kJit, overflow, 0, 0x00);
  finish(jitted);
  if (stable && !(jitted == first)) tier_failure("the JIT disagrees", program, first, jitted);
  if (jit->leaf_entry() != nullptr) {
    TierOutcome leaf = run_tier_at(program, Tier::kJitLeaf, overflow, 0, 0x00);
    finish(leaf);
    if (stable && !(leaf == first)) {
      tier_failure("the JIT's leaf entry disagrees", program, first, leaf);
    }
  }
  if (stable) {
    ++stats.compared;
  } else {
    ++stats.unstable;
  }
}

}  // namespace userperf::fuzz
