// The text assembler for bpf_conformance's syntax (`mov32 %r0, 1`, `ldxh %r0, [%r1+2]`,
// `lock fetch add [%r10-8], %r1`, `jne %r0, 15, failed`, `call local func1`, labels `L1:`, `#`
// comments), plus:
//   `lddw %rN, map:NAME` / `map_value:NAME+OFF`  map references (BPF_PSEUDO_MAP_IDX[_VALUE])
//   `lddw %rN, KIND:ARG[+OFF]`                    other pseudo sources (map_fd, btf_id, func...)
//   `call NAME`                                   kernel helpers by name (with or without bpf_)
//   `call %rN`                                    callx (the register in dst_reg)
//   `ldabs{b,h,w} IMM`, `ldind{b,h,w} %rS, IMM`   legacy packet loads
//   `raw 0xWORD`                                  any instruction as its 64-bit word
// Jump targets are labels or relative offsets (`+3`, `-2`); the first `exit` is also the label
// `exit` unless the program defines one.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "bpf/isa/insn.hpp"
#include "support/expected.hpp"

namespace userperf::bpf {

struct AssembleOptions {
  // Resolves `map:NAME` / `map_value:NAME` to a map index; nullopt (or no function) = unknown.
  // A decimal ARG is an index as is.
  std::function<std::optional<std::uint32_t>(std::string_view name)> map_index;
  int first_line = 1;  // the line number of the text's first line, for messages
};

// The program, or EINVAL with "line N: what is wrong".
Expected<std::vector<Insn>> assemble(std::string_view text, const AssembleOptions& options = {});

}  // namespace userperf::bpf
