// Turns one entry function of an object into a ProgramImage's instructions: copies it, applies
// the relocations of its section (map and global-data references become lddw pseudo loads by map
// index, calls and function addresses point at subprograms) and appends every subprogram it can
// reach, once each, after it, depth first in the order of first reference (libbpf's layout).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bpf/isa/insn.hpp"
#include "bpf/loader/elf_view.hpp"
#include "support/expected.hpp"

namespace userperf::bpf::loader {

// Where ObjectImage::maps entries come from.
struct MapLayout {
  std::uint32_t maps_section = 0;                      // .maps, 0 when absent
  std::map<std::uint64_t, std::uint32_t> btf_map_at;   // offset in .maps -> map index
  std::map<std::uint32_t, std::uint32_t> data_map_of;  // data section index -> map index
};

// A function: a STT_FUNC symbol of an executable section, in instructions.
struct FunctionRange {
  std::string name;
  std::uint32_t section = 0;
  std::uint64_t first = 0;
  std::uint64_t count = 0;
};

// A linked program: its instructions and where each function it holds starts in them (the main
// function at 0), for the BTF function info.
struct LinkedProgram {
  struct Function {
    std::string name;
    std::uint32_t start = 0;
  };
  std::vector<Insn> insns;
  std::vector<Function> functions;
};

// Every relocation of every executable section is in bounds, on an instruction, of a known type
// (R_BPF_64_64 on an lddw, R_BPF_64_32 on a BPF-to-BPF call) and names a symbol that exists.
// The loader runs this before libbpf, whose own checks would otherwise word the errors.
std::optional<Error> check_code_relocations(const ElfView& elf);

class ProgramLinker {
 public:
  // Checks every function symbol (whole instructions inside its section) and every relocation
  // (check_code_relocations), whether reachable or not.
  static Expected<ProgramLinker> create(const ElfView& elf, MapLayout layout);

  const std::vector<FunctionRange>& functions() const { return functions_; }
  Expected<LinkedProgram> link(const FunctionRange& entry) const;

 private:
  ProgramLinker(const ElfView& elf, MapLayout layout) : elf_(&elf), layout_(std::move(layout)) {}
  const FunctionRange* function_starting_at(std::uint32_t section, std::uint64_t insn) const;

  const ElfView* elf_;
  MapLayout layout_;
  std::vector<FunctionRange> functions_;
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::size_t> function_at_;  // (section, first)
  // (section, byte offset) -> relocation
  std::map<std::pair<std::uint32_t, std::uint64_t>, ElfRelocation> relocations_;

  friend class LinkRun;
};

}  // namespace userperf::bpf::loader
