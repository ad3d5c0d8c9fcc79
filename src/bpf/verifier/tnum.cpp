#include "bpf/verifier/tnum.hpp"

#include <bit>
#include <cstdio>

namespace userperf::bpf {

Tnum Tnum::range(std::uint64_t min, std::uint64_t max) {
  const std::uint64_t chi = min ^ max;
  const int bits = chi == 0 ? 0 : 64 - std::countl_zero(chi);
  if (bits > 63) return unknown();
  const std::uint64_t delta = (1ULL << bits) - 1;
  return {min & ~delta, delta};
}

bool Tnum::contains(const Tnum& inner) const {
  if (inner.mask & ~mask) return false;
  return (inner.value & ~mask) == value;
}

Tnum Tnum::arshift(std::uint8_t shift, std::uint8_t bits) const {
  if (bits == 32) {
    return {static_cast<std::uint32_t>(static_cast<std::int32_t>(value) >> shift),
            static_cast<std::uint32_t>(static_cast<std::int32_t>(mask) >> shift)};
  }
  return {static_cast<std::uint64_t>(static_cast<std::int64_t>(value) >> shift),
          static_cast<std::uint64_t>(static_cast<std::int64_t>(mask) >> shift)};
}

Tnum Tnum::cast(std::uint8_t bytes) const {
  if (bytes >= 8) return *this;
  const std::uint64_t keep = (1ULL << (bytes * 8)) - 1;
  return {value & keep, mask & keep};
}

Tnum Tnum::with_subreg(const Tnum& sub) const {
  return tnum_or(clear_subreg(), sub.subreg());
}

std::string Tnum::str() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "(%#llx; %#llx)", static_cast<unsigned long long>(value),
                static_cast<unsigned long long>(mask));
  return buf;
}

Tnum tnum_add(Tnum a, Tnum b) {
  const std::uint64_t sm = a.mask + b.mask;
  const std::uint64_t sv = a.value + b.value;
  const std::uint64_t sigma = sm + sv;
  const std::uint64_t chi = sigma ^ sv;
  const std::uint64_t mu = chi | a.mask | b.mask;
  return {sv & ~mu, mu};
}

Tnum tnum_sub(Tnum a, Tnum b) {
  const std::uint64_t dv = a.value - b.value;
  const std::uint64_t alpha = dv + a.mask;
  const std::uint64_t beta = dv - b.mask;
  const std::uint64_t chi = alpha ^ beta;
  const std::uint64_t mu = chi | a.mask | b.mask;
  return {dv & ~mu, mu};
}

Tnum tnum_and(Tnum a, Tnum b) {
  const std::uint64_t alpha = a.value | a.mask;
  const std::uint64_t beta = b.value | b.mask;
  const std::uint64_t v = a.value & b.value;
  return {v, alpha & beta & ~v};
}

Tnum tnum_or(Tnum a, Tnum b) {
  const std::uint64_t v = a.value | b.value;
  const std::uint64_t mu = a.mask | b.mask;
  return {v, mu & ~v};
}

Tnum tnum_xor(Tnum a, Tnum b) {
  const std::uint64_t v = a.value ^ b.value;
  const std::uint64_t mu = a.mask | b.mask;
  return {v & ~mu, mu};
}

// The kernel's multiplication (Linux 6.18; its verifier log shows these tnums): for each bit of
// `a`, a certain 1 adds `b` (shifted), an unknown bit takes the union of the accumulator with and
// without it. The older algorithm (the known product plus an accumulated mask) is sometimes tighter
// and sometimes looser, and userperf must reach the kernel's verdicts.
Tnum tnum_mul(Tnum a, Tnum b) {
  Tnum acc = Tnum::constant(0);
  while (a.value || a.mask) {
    if (a.value & 1) {
      acc = tnum_add(acc, b);
    } else if (a.mask & 1) {
      acc = tnum_union(acc, tnum_add(acc, b));
    }
    a = a.rshift(1);
    b = b.lshift(1);
  }
  return acc;
}

Tnum tnum_union(Tnum a, Tnum b) {
  const std::uint64_t mu = (a.value ^ b.value) | a.mask | b.mask;
  return {a.value & b.value & ~mu, mu};
}

Tnum tnum_intersect(Tnum a, Tnum b) {
  const std::uint64_t v = a.value | b.value;
  const std::uint64_t mu = a.mask & b.mask;
  return {v & ~mu, mu};
}

}  // namespace userperf::bpf
