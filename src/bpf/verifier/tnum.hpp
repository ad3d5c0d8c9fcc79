// Tristate numbers: a 64-bit value whose bits are known 0, known 1 or unknown (mask bit set), as
// the kernel's kernel/bpf/tnum.c tracks them for scalars and variable pointer offsets.
#pragma once

#include <cstdint>
#include <string>

namespace userperf::bpf {

struct Tnum {
  std::uint64_t value = 0;
  std::uint64_t mask = 0;  // 1 = unknown bit; value has 0 there

  static constexpr Tnum constant(std::uint64_t v) { return {v, 0}; }
  static constexpr Tnum unknown() { return {0, ~0ULL}; }
  static Tnum range(std::uint64_t min, std::uint64_t max);

  bool is_const() const { return mask == 0; }
  bool is_unknown() const { return mask == ~0ULL; }
  bool operator==(const Tnum&) const = default;
  // Every value of `inner` is a value of this.
  bool contains(const Tnum& inner) const;
  bool is_aligned(std::uint64_t size) const {
    return size == 0 || ((value | mask) & (size - 1)) == 0;
  }

  Tnum lshift(std::uint8_t shift) const { return {value << shift, mask << shift}; }
  Tnum rshift(std::uint8_t shift) const { return {value >> shift, mask >> shift}; }
  Tnum arshift(std::uint8_t shift, std::uint8_t bits) const;
  Tnum cast(std::uint8_t bytes) const;  // truncate to the low `bytes`
  Tnum subreg() const { return cast(4); }
  Tnum with_subreg(const Tnum& sub) const;  // high 32 bits of this, low of sub
  Tnum clear_subreg() const { return rshift(32).lshift(32); }
  std::string str() const;
};

Tnum tnum_add(Tnum a, Tnum b);
Tnum tnum_sub(Tnum a, Tnum b);
Tnum tnum_and(Tnum a, Tnum b);
Tnum tnum_or(Tnum a, Tnum b);
Tnum tnum_xor(Tnum a, Tnum b);
Tnum tnum_mul(Tnum a, Tnum b);
// Every value of either (kernel: tnum_union).
Tnum tnum_union(Tnum a, Tnum b);
Tnum tnum_intersect(Tnum a, Tnum b);

}  // namespace userperf::bpf
