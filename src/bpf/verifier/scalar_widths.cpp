// What a change of width does to a scalar's bounds: a 32-bit result's zero extension, a narrow
// load's zero extension, a sign-extending load or movsx (64- and 32-bit), and a byte swap. The
// kernel's zext_32_to_64, coerce_reg_to_size, coerce_reg_to_size_sx, coerce_subreg_to_size_sx and
// scalar_byte_swap (Linux 6.18), written from their rules over scalar_bounds.cpp's deductions.
#include <algorithm>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

#include "bpf/isa/int_types.hpp"
#include "bpf/verifier/reg_state.hpp"

namespace userperf::bpf {
namespace {
s64 sign_extend(u64 v, int bytes) {
  const int shift = 64 - bytes * 8;
  return static_cast<s64>(v << shift) >> shift;
}

// The range of a sign extension from `bytes` of the values in [min, max], when they all agree
// above the narrow width and the extended ends have one sign (then the range keeps its shape);
// nullopt otherwise. The kernel's coerce_reg_to_size_sx and coerce_subreg_to_size_sx, at S = s64
// and s32.
template <typename S>
std::optional<std::pair<S, S>> sign_extended_range(S min, S max, int bytes) {
  using U = std::make_unsigned_t<S>;
  const int bits = bytes * 8;
  if ((static_cast<U>(max) >> bits) != (static_cast<U>(min) >> bits)) return std::nullopt;
  const auto a = static_cast<S>(sign_extend(static_cast<U>(max), bytes));
  const auto b = static_cast<S>(sign_extend(static_cast<U>(min), bytes));
  const S hi = std::max(a, b);
  const S lo = std::min(a, b);
  if ((hi >= 0) != (lo >= 0)) return std::nullopt;
  return std::pair{lo, hi};
}

}  // namespace

void zext_32_to_64(RegState& r) {
  r.var_off = r.var_off.subreg();
  r.umin = r.u32_min;
  r.umax = r.u32_max;
  if (r.s32_min >= 0 && r.s32_max >= 0) {
    r.smin = r.s32_min;
    r.smax = r.s32_max;
  } else {
    r.smin = 0;
    r.smax = std::numeric_limits<u32>::max();
  }
}

void coerce_to_size(RegState& r, int bytes) {
  if (bytes >= 8) return;
  r.var_off = r.var_off.cast(static_cast<std::uint8_t>(bytes));
  const u64 mask = (1ULL << (bytes * 8)) - 1;
  if ((r.umin & ~mask) == (r.umax & ~mask)) {
    r.umin &= mask;
    r.umax &= mask;
  } else {
    r.umin = 0;
    r.umax = mask;
  }
  r.smin = static_cast<s64>(r.umin);
  r.smax = static_cast<s64>(r.umax);
  if (bytes < 4) mark32_unbounded(r);
  reg_bounds_sync(r);
}

void scalar_byte_swap(RegState& r, bool alu64, bool to_le, int bits) {
  const bool swap = alu64 || !to_le;               // x86-64 is little-endian: `le` is no swap
  if (swap || bits == 16 || bits == 32) r.id = 0;  // a changed value leaves its ties
  if (swap) {
    const Tnum t = bits == 16 ? r.var_off.cast(2) : bits == 32 ? r.var_off.cast(4) : r.var_off;
    const int shift = 64 - bits;
    r.var_off = {__builtin_bswap64(t.value) >> shift, __builtin_bswap64(t.mask) >> shift};
    mark_unbounded(r);  // a swap scrambles the ranges: only the tnum says anything
  }
  if (bits == 16 || bits == 32) coerce_to_size(r, bits / 8);
  reg_bounds_sync(r);
}

void coerce_to_size_sx(RegState& r, int bytes) {
  if (bytes >= 8) return;
  if (r.var_off.is_const()) {
    mark_known(r, static_cast<u64>(sign_extend(r.var_off.value, bytes)));
    return;
  }
  if (const auto range = sign_extended_range<s64>(r.smin, r.smax, bytes)) {
    const auto [lo, hi] = *range;
    mark_unbounded(r);
    r.smin = lo;
    r.smax = hi;
    r.umin = static_cast<u64>(lo);
    r.umax = static_cast<u64>(hi);
    r.var_off = Tnum::range(static_cast<u64>(lo), static_cast<u64>(hi));
    reg_bounds_sync(r);
    return;
  }
  const int bits = bytes * 8;
  mark_unbounded(r);
  r.var_off = Tnum::unknown();
  r.smin = -(1LL << (bits - 1));
  r.smax = (1LL << (bits - 1)) - 1;
  if (bytes < 4) {
    r.s32_min = static_cast<s32>(r.smin);
    r.s32_max = static_cast<s32>(r.smax);
  }
  reg_bounds_sync(r);
}

void coerce_subreg_to_size_sx(RegState& r, int bytes) {
  if (r.var_off.subreg().is_const()) {
    mark_known(r, static_cast<u32>(sign_extend(r.var_off.value, bytes)));
    return;
  }
  if (const auto range = sign_extended_range<s32>(r.s32_min, r.s32_max, bytes)) {
    const auto [lo, hi] = *range;
    mark_unbounded(r);
    r.s32_min = lo;
    r.s32_max = hi;
    r.u32_min = static_cast<u32>(lo);
    r.u32_max = static_cast<u32>(hi);
    r.var_off =
        Tnum::range(static_cast<u64>(static_cast<s64>(lo)), static_cast<u64>(static_cast<s64>(hi)))
            .subreg();
  } else {
    mark_unbounded(r);
    r.var_off = Tnum::unknown();
    r.s32_min = -(1 << (bytes * 8 - 1));
    r.s32_max = (1 << (bytes * 8 - 1)) - 1;
  }
  reg_bounds_sync(r);
  zext_32_to_64(r);
  reg_bounds_sync(r);
}

}  // namespace userperf::bpf
