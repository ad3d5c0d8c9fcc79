// The disassembler: each instruction in the assembler's syntax, so that
// assemble(disassemble(p)) == p for every program (instructions with no mnemonic, such as
// invalid encodings or a truncated lddw, come out as `raw 0xWORD`). Jumps and local calls print
// relative offsets (`jeq %r1, 0, +3`).
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "bpf/isa/insn.hpp"

namespace userperf::bpf {

struct DisassembleOptions {
  bool helper_names = false;               // `call bpf_map_lookup_elem` instead of `call 1`
  std::span<const std::string> map_names;  // `map:NAME` for indices that have one
};

// The instruction at `index` (both slots for a lddw), without a newline.
std::string disassemble_insn(std::span<const Insn> insns, std::size_t index,
                             const DisassembleOptions& options = {});
// Every instruction, one line each.
std::string disassemble(std::span<const Insn> insns, const DisassembleOptions& options = {});

// How many slots the instruction at `index` occupies in the listing: 2 for a complete lddw.
std::size_t insn_slots(std::span<const Insn> insns, std::size_t index);

}  // namespace userperf::bpf
