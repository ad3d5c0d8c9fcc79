// Facts about opcodes: whether an instruction is a valid RFC 9669 instruction (up to cpu v4, plus
// the legacy packet loads), and the cpu version and conformance group bpf_conformance's runner
// assigns it when deciding which tests a runtime can run.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "bpf/isa/insn.hpp"

namespace userperf::bpf {

// Atomic operations (STX | ATOMIC, the operation in imm), as <linux/bpf.h> spells them.
inline constexpr std::int32_t kAtomicFetch = BPF_FETCH;
inline constexpr std::int32_t kAtomicXchg = BPF_XCHG;
inline constexpr std::int32_t kAtomicCmpxchg = BPF_CMPXCHG;
// Every read-modify-write operation (RFC 9669's atomic32/atomic64 groups): add, or, and, xor with
// and without BPF_FETCH, xchg, cmpxchg. Load-acquire and store-release are not among them.
inline constexpr std::array<std::int32_t, 10> kAtomicRmwOps = {BPF_ADD,
                                                               BPF_OR,
                                                               BPF_AND,
                                                               BPF_XOR,
                                                               BPF_ADD | BPF_FETCH,
                                                               BPF_OR | BPF_FETCH,
                                                               BPF_AND | BPF_FETCH,
                                                               BPF_XOR | BPF_FETCH,
                                                               BPF_XCHG,
                                                               BPF_CMPXCHG};

// The v1..v4 levels of clang's -mcpu, as bpf_conformance labels opcodes.
enum class CpuVersion : std::uint8_t { kV1 = 1, kV2 = 2, kV3 = 3, kV4 = 4 };

// Conformance groups (RFC 9669's IANA registry, plus bpf_conformance's callx): a bit set.
enum ConformanceGroup : std::uint32_t {
  kGroupBase32 = 1u << 0,
  kGroupBase64 = 1u << 1,
  kGroupAtomic32 = 1u << 2,
  kGroupAtomic64 = 1u << 3,
  kGroupDivmul32 = 1u << 4,
  kGroupDivmul64 = 1u << 5,
  kGroupCallx = 1u << 6,
  kGroupPacket = 1u << 7,
};
inline constexpr std::uint32_t kAllGroups = 0xff;

struct ConformanceInfo {
  CpuVersion cpu_version = CpuVersion::kV1;
  std::uint32_t groups = 0;
};

// nullptr when `insn` is a valid instruction: a known opcode with its unused fields zero and
// registers r0..r10 (for lddw, only the first slot is checked). Otherwise the reason, a constant.
const char* insn_invalid_reason(const Insn& insn);
inline bool insn_valid(const Insn& insn) {
  return insn_invalid_reason(insn) == nullptr;
}

// The runner's label of one instruction; nullopt for instructions its table does not list
// (those do not make a test skip). Follows the runner's table including its quirks: it compares
// src only for lddw and call, imm only for atomics and le/be, off only for div/mod/mov.
std::optional<ConformanceInfo> conformance_info(const Insn& insn);

// What a program needs: the highest cpu version and the union of the groups of its instructions
// (the second slot of each lddw is skipped).
ConformanceInfo program_conformance(std::span<const Insn> insns);

const char* cpu_version_name(CpuVersion version);  // "v1".."v4"
std::optional<CpuVersion> parse_cpu_version(std::string_view name);
const char* group_name(ConformanceGroup group);  // "base32", ..., "packet"
std::optional<ConformanceGroup> parse_group(std::string_view name);
std::string group_names(std::uint32_t groups);  // "base32,divmul64"

}  // namespace userperf::bpf
