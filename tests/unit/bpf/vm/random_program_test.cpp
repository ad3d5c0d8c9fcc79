// Thousands of random, unverified programs on the checked interpreter. Their memory regions are
// pages fenced by PROT_NONE guard pages, so an access that escaped the checks would crash the
// test; every fault must be reported as kFault at a memory instruction with its address.
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <random>

#include "bpf/isa/disassembler.hpp"
#include "bpf/isa/opcode_facts.hpp"
#include "support/guarded_pages.hpp"
#include "vm_test_support.hpp"

namespace userperf::bpf {
namespace {

// One page of data between two guard pages (tests/support/guarded_pages.hpp).
class GuardedPage : public userperf::testing::GuardedPages {
 public:
  GuardedPage() : GuardedPages(static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), false) {}
};

std::uint64_t echo_helper(std::uint64_t r1, std::uint64_t, std::uint64_t, std::uint64_t,
                          std::uint64_t, CallContext&) {
  return r1;
}

class Generator {
 public:
  explicit Generator(std::uint64_t seed, std::size_t page) : rng_(seed), page_(page) {}

  std::vector<Insn> program() {
    std::vector<Insn> insns;
    // Prologue: registers pointing into, just outside, or far from the regions.
    for (std::uint8_t r = 3; r <= 9; ++r) {
      switch (pick(4)) {
        case 0:  // inside or around r1's page
          insns.push_back(make_insn(BPF_ALU64 | BPF_MOV | BPF_X, r, 1, 0, 0));
          insns.push_back(
              make_insn(BPF_ALU64 | BPF_ADD | BPF_K, r, 0, 0,
                        static_cast<std::int32_t>(range(-64, static_cast<int>(page_) + 64))));
          break;
        case 1:  // around the read-only page in r2
          insns.push_back(make_insn(BPF_ALU64 | BPF_MOV | BPF_X, r, 2, 0, 0));
          insns.push_back(
              make_insn(BPF_ALU64 | BPF_ADD | BPF_K, r, 0, 0,
                        static_cast<std::int32_t>(range(-16, static_cast<int>(page_) + 16))));
          break;
        case 2:  // on the stack
          insns.push_back(make_insn(BPF_ALU64 | BPF_MOV | BPF_X, r, 10, 0, 0));
          insns.push_back(make_insn(BPF_ALU64 | BPF_ADD | BPF_K, r, 0, 0, range(-600, 8)));
          break;
        default:  // anything
          insns.push_back(
              make_insn(BPF_LD | BPF_IMM | BPF_DW, r, 0, 0, static_cast<std::int32_t>(rng_())));
          insns.push_back(make_insn(0, 0, 0, 0, static_cast<std::int32_t>(rng_())));
      }
    }
    const std::size_t body = 1 + pick(40);
    const std::size_t start = insns.size();
    while (insns.size() < start + body) {
      Insn insn = random_insn();
      if (is_lddw(insn)) {
        insns.push_back(insn);
        insns.push_back(make_insn(0, 0, 0, 0, static_cast<std::int32_t>(rng_())));
      } else {
        insns.push_back(insn);
      }
    }
    insns.push_back(make_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
    // Jumps and local calls inside the body (the loader rejects the rest; fix most of them).
    const auto n = static_cast<int>(insns.size());
    for (int i = static_cast<int>(start); i < n; ++i) {
      Insn& insn = insns[static_cast<std::size_t>(i)];
      const std::uint8_t cls = insn_class(insn.code);
      if (cls != BPF_JMP && cls != BPF_JMP32) continue;
      const std::uint8_t op = insn_op(insn.code);
      if (op == BPF_EXIT || (op == BPF_CALL && insn.src_reg != BPF_PSEUDO_CALL)) continue;
      const int rel = range(static_cast<int>(start) - i - 1, n - i - 2);
      if ((op == BPF_JA && cls == BPF_JMP32) || op == BPF_CALL) {
        insn.imm = rel;
      } else {
        insn.off = static_cast<std::int16_t>(rel);
      }
    }
    return insns;
  }

 private:
  std::size_t pick(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }
  int range(int low, int high) {
    return low + static_cast<int>(rng_() % static_cast<std::uint64_t>(high - low + 1));
  }

  std::int32_t random_imm() {
    static constexpr std::array<std::int32_t, 12> kSpecial = {
        0, 1, -1, 16, 32, 64, 63, 31, INT32_MIN, INT32_MAX, 8, 0x7ff};
    switch (pick(3)) {
      case 0:
        return kSpecial[pick(kSpecial.size())];
      case 1:
        return range(-64, 64);
      default:
        return static_cast<std::int32_t>(rng_());
    }
  }

  Insn random_insn() {
    static constexpr std::array<std::int32_t, 10> kAtomicOps = {
        BPF_ADD, BPF_ADD | BPF_FETCH, BPF_OR,   BPF_OR | BPF_FETCH, BPF_AND, BPF_AND | BPF_FETCH,
        BPF_XOR, BPF_XOR | BPF_FETCH, BPF_XCHG, BPF_CMPXCHG};
    while (true) {
      Insn insn{};
      insn.code = static_cast<std::uint8_t>(rng_());
      insn.dst_reg = static_cast<std::uint8_t>(pick(10)) & 0xf;  // r10 only as a base below
      insn.src_reg = static_cast<std::uint8_t>(pick(11)) & 0xf;
      insn.imm = random_imm();
      insn.off = 0;
      const std::uint8_t cls = insn_class(insn.code);
      if (cls == BPF_LD) {
        if (!is_lddw(insn)) continue;  // packet loads are refused by the loader
        insn.src_reg = 0;
      } else if (cls == BPF_LDX || cls == BPF_ST || cls == BPF_STX) {
        insn.off =
            static_cast<std::int16_t>(pick(8) == 0 ? static_cast<int>(rng_()) : range(-600, 4200));
        if (cls != BPF_LDX && pick(4) == 0) insn.dst_reg = kFramePointer;
        if (cls == BPF_LDX && pick(4) == 0) insn.src_reg = kFramePointer;
        if (cls == BPF_STX && insn_mode(insn.code) == BPF_ATOMIC)
          insn.imm = kAtomicOps[pick(kAtomicOps.size())];
      } else if (cls == BPF_ALU || cls == BPF_ALU64) {
        const std::uint8_t op = insn_op(insn.code);
        if (op == BPF_DIV || op == BPF_MOD) insn.off = static_cast<std::int16_t>(pick(2));
        if (op == BPF_MOV && insn_source(insn.code) == BPF_X) {
          static constexpr std::array<std::int16_t, 4> kWidths = {0, 8, 16, 32};
          insn.off = kWidths[pick(4)];
        }
      } else if (insn_op(insn.code) == BPF_CALL && cls == BPF_JMP) {
        insn.src_reg = pick(3) == 0 ? BPF_PSEUDO_CALL : 0;
        if (insn.src_reg == 0) insn.imm = static_cast<std::int32_t>(pick(4));
        if (insn_source(insn.code) == BPF_X) insn.dst_reg = static_cast<std::uint8_t>(pick(10));
      }
      if (insn_source(insn.code) == BPF_K)
        insn.src_reg = cls == BPF_LDX || cls == BPF_STX ? insn.src_reg : 0;
      if (insn_source(insn.code) == BPF_X &&
          (cls == BPF_ALU || cls == BPF_ALU64 || cls == BPF_JMP || cls == BPF_JMP32)) {
        insn.imm = 0;
      }
      if (insn_op(insn.code) == BPF_CALL && insn_source(insn.code) == BPF_K && cls == BPF_JMP &&
          insn.src_reg == 0 && pick(2) == 0) {
        insn.imm = static_cast<std::int32_t>(pick(4));
      }
      if (insn_valid(insn)) return insn;
    }
  }

  std::mt19937_64 rng_;
  std::size_t page_;
};

std::size_t access_size(const Insn& insn) {
  return static_cast<std::size_t>(insn_access_bytes(insn.code));
}

TEST(RandomPrograms, NeverTouchMemoryOutsideTheirRegions) {
  GuardedPage context, read_only, global;
  ASSERT_TRUE(context.ok() && read_only.ok() && global.ok());
  std::mt19937_64 fill(7);
  for (GuardedPage* page : {&context, &read_only, &global}) {
    for (std::size_t i = 0; i < page->size(); ++i)
      page->data()[i] = static_cast<std::uint8_t>(fill());
  }
  read_only.make_read_only();
  const std::array<MemoryRegion, 2> regions = {context.region(true), read_only.region(false)};
  const MemoryRegion global_region = global.region(true);
  auto allowed = [&](std::uint64_t addr, std::uint64_t size, bool write) {
    for (const MemoryRegion& r : {regions[0], regions[1], global_region}) {
      if (addr >= r.begin && addr < r.end && size <= r.end - addr && (r.writable || !write))
        return true;
    }
    return false;
  };

  constexpr std::uint64_t kSeed = 0x5eed0bbf;
  constexpr int kPrograms = 20000;
  Generator generator(kSeed, context.size());
  int loaded = 0;
  std::array<int, 6> statuses{};
  for (int n = 0; n < kPrograms; ++n) {
    std::vector<Insn> insns = generator.program();
    InterpreterOptions options;
    options.helpers = {nullptr, echo_helper, nullptr, echo_helper};
    options.static_regions = {global_region};
    options.instruction_budget = 2000;
    auto interpreter = Interpreter::load(insns, options);
    if (!interpreter) continue;
    ++loaded;
    RunResult result = (*interpreter)->run(regions[0].begin, regions[1].begin, regions, nullptr);
    ++statuses[static_cast<std::size_t>(result.status)];
    if (result.status != RunStatus::kFault) continue;
    ASSERT_LT(result.pc, insns.size());
    const Insn& at = insns[result.pc];
    const std::uint8_t cls = insn_class(at.code);
    ASSERT_TRUE(cls == BPF_LDX || cls == BPF_ST || cls == BPF_STX)
        << "program " << n << " faulted at a non-memory instruction\n"
        << disassemble(insns);
    const bool atomic = cls == BPF_STX && insn_mode(at.code) == BPF_ATOMIC;
    const bool misaligned_atomic = atomic && result.fault_addr % access_size(at) != 0;
    EXPECT_TRUE(misaligned_atomic || !allowed(result.fault_addr, access_size(at), cls != BPF_LDX))
        << "program " << n << " faulted on an allowed access at " << result.fault_addr << "\n"
        << disassemble(insns);
  }
  // The test is only meaningful if programs load and take every way out.
  EXPECT_GT(loaded, kPrograms * 9 / 10);
  EXPECT_GT(statuses[static_cast<std::size_t>(RunStatus::kOk)], kPrograms / 20);
  EXPECT_GT(statuses[static_cast<std::size_t>(RunStatus::kFault)], kPrograms / 20);
  EXPECT_GT(statuses[static_cast<std::size_t>(RunStatus::kBudget)], 0);
  EXPECT_GT(statuses[static_cast<std::size_t>(RunStatus::kBadHelper)], 0);
  RecordProperty("loaded", loaded);
  std::printf("seed %#llx: %d loaded; ok %d, fault %d, budget %d, call depth %d, bad helper %d\n",
              static_cast<unsigned long long>(kSeed), loaded, statuses[0], statuses[1], statuses[2],
              statuses[3], statuses[4]);
}

}  // namespace
}  // namespace userperf::bpf
