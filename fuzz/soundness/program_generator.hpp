// Structured random BPF_PROG_TYPE_PERF_EVENT programs for the verifier soundness campaign: not
// random bytes but sequences of units a verifier must reason about (ctx loads and ctx pointer
// arithmetic, stack pointers with variable offsets, map lookups with and without their NULL check,
// accesses bounded by 32- and 64-bit compares that are sometimes off by one, spills and fills of
// pointers and scalars at full and partial width, helper calls with memory arguments, bounded
// loops, atomic read-modify-writes, bpf-to-bpf calls). About 40% of them are valid; the rest break
// a rule, often by a small margin.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bpf/isa/insn.hpp"
#include "bpf/isa/program_image.hpp"

namespace userperf::soundness {

// The maps every program may reference (BPF_PSEUDO_MAP_IDX = the index here), created alike in
// userperf and in the kernel. One entry each, so that a map's value storage is exactly its values
// (the checked interpreter's region for it) and an access past a value is out of every region.
std::vector<bpf::MapSpec> campaign_maps();
enum CampaignMap : std::int32_t { kArray8 = 0, kArray48 = 1, kArray256 = 2, kHash16 = 3 };

class ProgramGenerator {
 public:
  explicit ProgramGenerator(std::uint64_t seed) : rng_(seed) {}
  std::vector<bpf::Insn> program();

 private:
  struct Unit {
    std::vector<bpf::Insn> insns;
    std::vector<std::size_t> to_exit;  // jumps (by index in insns) to the program's epilogue
    // BPF_PSEUDO_CALLs (by index in insns) of the subprogram subprograms_[second]: their imm is
    // set when the subprograms are placed after the main function.
    std::vector<std::pair<std::size_t, std::size_t>> calls;
  };
  std::mt19937_64 rng_;
  std::vector<std::vector<bpf::Insn>> subprograms_;  // the current program's

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(int percent) { return pick(0, 99) < percent; }

  Unit unit();
  Unit scalar_source();
  Unit bound_scalar();
  Unit scalar_arith();
  Unit ctx_access();
  Unit stack_access();
  Unit map_access();
  Unit spill_fill();
  Unit helper_call();
  Unit bounded_loop();
  Unit atomic_access();
  Unit local_call();
  std::vector<bpf::Insn> subprogram();
  Unit accumulate(int reg);

  // Appends an access (load or store of 1..8 bytes) through `base` + off.
  void access(Unit& u, int base, std::int16_t off, bool allow_store);
  // A jump to the epilogue when `reg` (vs imm) holds; 32-bit (JMP32) or 64-bit, any condition.
  void exit_if(Unit& u, std::uint8_t op, bool jmp32, int reg, std::int32_t imm);
  std::int32_t near(std::int32_t value);  // value, or one off it (deliberate off-by-one bounds)
};

}  // namespace userperf::soundness
