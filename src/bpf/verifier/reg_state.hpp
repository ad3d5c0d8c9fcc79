// The abstract value of one register (or spilled stack slot) on one verifier path: its type and,
// for scalars and pointer offsets, the tnum and the u64/s64/u32/s32 ranges the kernel tracks
// (struct bpf_reg_state).
#pragma once

#include <cstdint>
#include <limits>

#include "bpf/verifier/tnum.hpp"

namespace userperf::bpf {

enum class RegType : std::uint8_t {
  kNotInit,
  kScalar,
  kPtrToCtx,
  kConstPtrToMap,
  kPtrToMapValue,  // maybe_null: PTR_TO_MAP_VALUE_OR_NULL
  kPtrToStack,
  kPtrToRingbufMem,  // PTR_TO_MEM | MEM_RINGBUF: a reserved record of mem_size bytes (maybe_null)
  kPtrToMem,    // PTR_TO_MEM: a global function's pointer argument of mem_size bytes (maybe_null)
  kPtrToFunc,   // a static subprogram's address (lddw src=BPF_PSEUDO_FUNC): a callback
  kPtrToBtfId,  // PTR_TO_BTF_ID: a kernel struct (btf_type in KernelBtfTypes), btf_flags below
};

// PTR_TO_BTF_ID's type flags (the kernel's PTR_TRUSTED, MEM_RCU, PTR_UNTRUSTED, MEM_USER,
// MEM_PERCPU); maybe_null is PTR_MAYBE_NULL.
enum BtfPtrFlag : std::uint8_t {
  kBtfTrusted = 1,
  kBtfRcu = 2,
  kBtfUntrusted = 4,
  kBtfUser = 8,
  kBtfPercpu = 16,
};

// BPF_MAX_VAR_OFF / BPF_MAX_VAR_SIZ: the largest variable offset and size the kernel tracks.
inline constexpr std::int64_t kMaxVarOff = 1LL << 29;
inline constexpr std::uint64_t kMaxVarSize = 1ULL << 29;

// Register `reg`'s bit in a register mask (ProgramShape::live_in, PrecisionSet::regs).
constexpr std::uint16_t reg_bit(int reg) {
  return static_cast<std::uint16_t>(1U << reg);
}

struct RegState {
  RegType type = RegType::kNotInit;
  bool maybe_null = false;
  bool precise = false;          // scalars: pruning must compare the value (kernel: reg->precise)
  std::uint8_t frameno = 0;      // PTR_TO_STACK: whose frame
  std::int16_t map = -1;         // CONST_PTR_TO_MAP / PTR_TO_MAP_VALUE: index in the map specs
  std::int16_t subprog = -1;     // PTR_TO_FUNC: the subprogram
  std::int32_t off = 0;          // pointers: the fixed offset
  std::uint32_t id = 0;          // NULL-check group, or linked scalars (copies of one value)
  std::uint32_t ref_obj_id = 0;  // the reference it carries (ringbuf records), 0: none
  std::uint32_t mem_size = 0;    // PTR_TO_RINGBUF_MEM, PTR_TO_MEM: the memory's size
  std::uint32_t btf_type = 0;    // PTR_TO_BTF_ID: the struct's index in KernelBtfTypes::types
  std::uint8_t btf_flags = 0;    // PTR_TO_BTF_ID: BtfPtrFlag bits
  Tnum var_off = Tnum::unknown();
  std::int64_t smin = std::numeric_limits<std::int64_t>::min();
  std::int64_t smax = std::numeric_limits<std::int64_t>::max();
  std::uint64_t umin = 0;
  std::uint64_t umax = std::numeric_limits<std::uint64_t>::max();
  std::int32_t s32_min = std::numeric_limits<std::int32_t>::min();
  std::int32_t s32_max = std::numeric_limits<std::int32_t>::max();
  std::uint32_t u32_min = 0;
  std::uint32_t u32_max = std::numeric_limits<std::uint32_t>::max();

  bool operator==(const RegState&) const = default;

  bool is_scalar() const { return type == RegType::kScalar; }
  bool is_pointer() const { return type != RegType::kNotInit && type != RegType::kScalar; }
  bool is_const() const { return type == RegType::kScalar && var_off.is_const(); }
  bool is_const32() const { return type == RegType::kScalar && var_off.subreg().is_const(); }
  bool is_null() const { return is_const() && var_off.value == 0; }
  // Pointers the kernel knows are never NULL (reg_not_null).
  bool not_null() const;
};

RegState make_unknown_scalar();
RegState make_known_scalar(std::uint64_t value);
RegState make_pointer(RegType type);  // offset 0, var_off 0

// The bound bookkeeping (kernel: reg_bounds_sync and friends).
void mark_unbounded(RegState& reg);    // every range full, tnum untouched
void mark32_unbounded(RegState& reg);  // the 32-bit ranges full
void mark_known(RegState& reg, std::uint64_t value);
void reg_bounds_sync(RegState& reg);
void zext_32_to_64(RegState& reg);                        // a 32-bit result: upper half zero
void coerce_to_size(RegState& reg, int bytes);            // zero-extending load of `bytes`
void coerce_to_size_sx(RegState& reg, int bytes);         // sign-extending load / movsx
void coerce_subreg_to_size_sx(RegState& reg, int bytes);  // 32-bit movsx
// BPF_END of a scalar (kernel: scalar_byte_swap, 6.18): a swap (ALU64 bswap, or `be` on this
// little-endian host) swaps the tnum's bytes and re-derives the ranges from it; le16/le32 and the
// swaps of 16 and 32 bits then truncate; le64 changes nothing.
void scalar_byte_swap(RegState& reg, bool alu64, bool to_le, int bits);

// The 64-bit ranges of dst + src and dst - src (kernel: scalar_min_max_add/sub), which pointer
// arithmetic applies to a pointer's variable offset as scalar_alu does to scalars.
void add_ranges64(RegState& dst, const RegState& src);
void sub_ranges64(RegState& dst, const RegState& src);

// Scalar ALU (kernel: adjust_scalar_min_max_vals). dst and src are scalars; op is BPF_ADD..;
// alu32 selects the 32-bit form (result zero-extended).
void scalar_alu(RegState& dst, const RegState& src, std::uint8_t op, bool alu32);

// Conditional jumps between two scalars (or a scalar and the immediate as a known scalar).
// is_branch_taken: 1 taken, 0 not taken, -1 unknown. Pointers are handled by the caller.
int scalar_branch_taken(const RegState& a, const RegState& b, std::uint8_t op, bool jmp32);
// Narrows a and b as if `a op b` held (op one of the BPF_J* ops, or kJsetFalse for !(a & b)).
inline constexpr std::uint8_t kJsetFalse = 0xff;
void scalar_refine(RegState& a, RegState& b, std::uint8_t op, bool jmp32);
std::uint8_t reverse_jump_op(std::uint8_t op);  // the op that holds on the fall-through path
std::uint8_t flip_jump_op(std::uint8_t op);     // the op after swapping the operands

}  // namespace userperf::bpf
