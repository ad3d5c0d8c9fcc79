// Range tracking for scalars: the same deductions the kernel makes (reg_bounds_sync,
// adjust_scalar_min_max_vals), written from their rules. What conditional jumps decide and
// narrow is scalar_branches.cpp; what a change of width does, scalar_widths.cpp.
#include <linux/bpf.h>

#include <algorithm>
#include <limits>
#include <type_traits>

#include "bpf/isa/int_types.hpp"
#include "bpf/verifier/reg_state.hpp"

namespace userperf::bpf {
namespace {

constexpr s64 kS64Min = std::numeric_limits<s64>::min();
constexpr s64 kS64Max = std::numeric_limits<s64>::max();
constexpr s32 kS32Min = std::numeric_limits<s32>::min();
constexpr s32 kS32Max = std::numeric_limits<s32>::max();
constexpr u32 kU32Max = std::numeric_limits<u32>::max();

// One width's ranges of a register: the 64-bit ones (smin, smax, umin, umax) or the 32-bit ones
// (s32_min, s32_max, u32_min, u32_max). The kernel writes a rule once per width
// (scalar32_min_max_add and scalar_min_max_add); here a rule takes Ranges and serves both.
template <class S>
struct Ranges {
  using U = std::make_unsigned_t<S>;
  S& smin;
  S& smax;
  U& umin;
  U& umax;
};

Ranges<s64> ranges64(RegState& r) {
  return {r.smin, r.smax, r.umin, r.umax};
}
Ranges<const s64> ranges64(const RegState& r) {
  return {r.smin, r.smax, r.umin, r.umax};
}
Ranges<s32> ranges32(RegState& r) {
  return {r.s32_min, r.s32_max, r.u32_min, r.u32_max};
}
Ranges<const s32> ranges32(const RegState& r) {
  return {r.s32_min, r.s32_max, r.u32_min, r.u32_max};
}

template <class S>
void set_unbounded(Ranges<S> r) {
  r.smin = std::numeric_limits<S>::min();
  r.smax = std::numeric_limits<S>::max();
  r.umin = 0;
  r.umax = std::numeric_limits<typename Ranges<S>::U>::max();
}

void update_bounds_from_tnum(RegState& r) {
  const Tnum t = r.var_off;
  r.smin = std::max<s64>(r.smin, static_cast<s64>(t.value | (t.mask & (1ULL << 63))));
  r.smax = std::min<s64>(r.smax, static_cast<s64>(t.value | (t.mask & ~(1ULL << 63))));
  r.umin = std::max(r.umin, t.value);
  r.umax = std::min(r.umax, t.value | t.mask);
  const Tnum s = t.subreg();
  r.s32_min = std::max<s32>(r.s32_min,
                            static_cast<s32>(static_cast<u32>(s.value | (s.mask & 0x80000000U))));
  r.s32_max = std::min<s32>(r.s32_max,
                            static_cast<s32>(static_cast<u32>(s.value | (s.mask & 0x7fffffffU))));
  r.u32_min = std::max(r.u32_min, static_cast<u32>(s.value));
  r.u32_max = std::min(r.u32_max, static_cast<u32>(s.value | s.mask));
}

void deduce32(RegState& r) {
  if ((r.umin >> 32) == (r.umax >> 32)) {
    r.u32_min = std::max(r.u32_min, static_cast<u32>(r.umin));
    r.u32_max = std::min(r.u32_max, static_cast<u32>(r.umax));
    if (static_cast<s32>(r.umin) <= static_cast<s32>(r.umax)) {
      r.s32_min = std::max(r.s32_min, static_cast<s32>(r.umin));
      r.s32_max = std::min(r.s32_max, static_cast<s32>(r.umax));
    }
  }
  if ((r.smin >> 32) == (r.smax >> 32)) {
    if (static_cast<u32>(r.smin) <= static_cast<u32>(r.smax)) {
      r.u32_min = std::max(r.u32_min, static_cast<u32>(r.smin));
      r.u32_max = std::min(r.u32_max, static_cast<u32>(r.smax));
    }
    if (static_cast<s32>(r.smin) <= static_cast<s32>(r.smax)) {
      r.s32_min = std::max(r.s32_min, static_cast<s32>(r.smin));
      r.s32_max = std::min(r.s32_max, static_cast<s32>(r.smax));
    }
  }
  // Upper halves two consecutive numbers while the low halves run from negative to positive.
  if (static_cast<u32>(r.umin >> 32) + 1 == static_cast<u32>(r.umax >> 32) &&
      static_cast<s32>(r.umin) < 0 && static_cast<s32>(r.umax) >= 0) {
    r.s32_min = std::max(r.s32_min, static_cast<s32>(r.umin));
    r.s32_max = std::min(r.s32_max, static_cast<s32>(r.umax));
  }
  if (static_cast<u32>(static_cast<u64>(r.smin) >> 32) + 1 ==
          static_cast<u32>(static_cast<u64>(r.smax) >> 32) &&
      static_cast<s32>(r.smin) < 0 && static_cast<s32>(r.smax) >= 0) {
    r.s32_min = std::max(r.s32_min, static_cast<s32>(r.smin));
    r.s32_max = std::min(r.s32_max, static_cast<s32>(r.smax));
  }
  if (static_cast<s32>(r.u32_min) <= static_cast<s32>(r.u32_max)) {
    r.s32_min = std::max(r.s32_min, static_cast<s32>(r.u32_min));
    r.s32_max = std::min(r.s32_max, static_cast<s32>(r.u32_max));
  }
  if (static_cast<u32>(r.s32_min) <= static_cast<u32>(r.s32_max)) {
    r.u32_min = std::max(r.u32_min, static_cast<u32>(r.s32_min));
    r.u32_max = std::min(r.u32_max, static_cast<u32>(r.s32_max));
  }
}

void deduce64(RegState& r) {
  if (static_cast<s64>(r.umin) <= static_cast<s64>(r.umax)) {
    r.smin = std::max(r.smin, static_cast<s64>(r.umin));
    r.smax = std::min(r.smax, static_cast<s64>(r.umax));
  }
  if (static_cast<u64>(r.smin) <= static_cast<u64>(r.smax)) {
    r.umin = std::max(r.umin, static_cast<u64>(r.smin));
    r.umax = std::min(r.umax, static_cast<u64>(r.smax));
  } else if (r.umax < static_cast<u64>(r.smin)) {
    // The signed range wraps: the unsigned range lies in its positive part.
    r.smin = static_cast<s64>(r.umin);
    r.umax = std::min(r.umax, static_cast<u64>(r.smax));
  } else if (static_cast<u64>(r.smax) < r.umin) {
    r.smax = static_cast<s64>(r.umax);
    r.umin = std::max(r.umin, static_cast<u64>(r.smin));
  }
}

void deduce_mixed(RegState& r) {
  const u64 new_umin = (r.umin & ~0xffffffffULL) | r.u32_min;
  const u64 new_umax = (r.umax & ~0xffffffffULL) | r.u32_max;
  r.umin = std::max(r.umin, new_umin);
  r.umax = std::min(r.umax, new_umax);
  const s64 new_smin = static_cast<s64>((static_cast<u64>(r.smin) & ~0xffffffffULL) | r.u32_min);
  const s64 new_smax = static_cast<s64>((static_cast<u64>(r.smax) & ~0xffffffffULL) | r.u32_max);
  r.smin = std::max(r.smin, new_smin);
  r.smax = std::min(r.smax, new_smax);
  if (r.s32_min >= 0 && r.smin >= kS32Min && r.smax <= kS32Max) {
    r.smin = r.s32_min;
    r.smax = r.s32_max;
    r.umin = static_cast<u64>(r.s32_min);
    r.umax = static_cast<u64>(r.s32_max);
    r.var_off = tnum_intersect(r.var_off, Tnum::range(r.umin, r.umax));
  }
}

void bound_offset(RegState& r) {
  const Tnum t64 = tnum_intersect(r.var_off, Tnum::range(r.umin, r.umax));
  const Tnum t32 = tnum_intersect(t64.subreg(), Tnum::range(r.u32_min, r.u32_max));
  r.var_off = tnum_or(t64.clear_subreg(), t32);
}

template <class T>
bool add_overflows(T a, T b, T& out) {
  return __builtin_add_overflow(a, b, &out);
}
template <class T>
bool sub_overflows(T a, T b, T& out) {
  return __builtin_sub_overflow(a, b, &out);
}
template <class T>
bool mul_overflows(T a, T b, T& out) {
  return __builtin_mul_overflow(a, b, &out);
}

// ---- The range rules of ADD, SUB and MUL, each run for the 32-bit ranges and then the 64-bit
// ones (the kernel runs the 32-bit half for 64-bit ops too: the low half of a 64-bit result is
// the 32-bit result). A bound that may overflow makes its pair unbounded.
template <class S>
void add_ranges(Ranges<S> d, Ranges<const S> s) {
  if (add_overflows(d.smin, s.smin, d.smin) || add_overflows(d.smax, s.smax, d.smax)) {
    d.smin = std::numeric_limits<S>::min();
    d.smax = std::numeric_limits<S>::max();
  }
  if (add_overflows(d.umin, s.umin, d.umin) || add_overflows(d.umax, s.umax, d.umax)) {
    d.umin = 0;
    d.umax = std::numeric_limits<typename Ranges<S>::U>::max();
  }
}

template <class S>
void sub_ranges(Ranges<S> d, Ranges<const S> s) {
  S lo = 0;
  S hi = 0;
  if (sub_overflows(d.smin, s.smax, lo) || sub_overflows(d.smax, s.smin, hi)) {
    d.smin = std::numeric_limits<S>::min();
    d.smax = std::numeric_limits<S>::max();
  } else {
    d.smin = lo;
    d.smax = hi;
  }
  if (d.umin < s.umax) {
    d.umin = 0;
    d.umax = std::numeric_limits<typename Ranges<S>::U>::max();
  } else {
    d.umin -= s.umax;
    d.umax -= s.umin;
  }
}

template <class S>
void mul_ranges(Ranges<S> d, Ranges<const S> s) {
  using U = typename Ranges<S>::U;
  U ulo = 0;
  U uhi = 0;
  if (mul_overflows(d.umin, s.umin, ulo) || mul_overflows(d.umax, s.umax, uhi)) {
    d.umin = 0;
    d.umax = std::numeric_limits<U>::max();
  } else {
    d.umin = ulo;
    d.umax = uhi;
  }
  S p[4];
  if (mul_overflows(d.smin, s.smin, p[0]) || mul_overflows(d.smin, s.smax, p[1]) ||
      mul_overflows(d.smax, s.smin, p[2]) || mul_overflows(d.smax, s.smax, p[3])) {
    d.smin = std::numeric_limits<S>::min();
    d.smax = std::numeric_limits<S>::max();
  } else {
    d.smin = *std::min_element(p, p + 4);
    d.smax = *std::max_element(p, p + 4);
  }
}

// AND/OR/XOR: the tnum has been computed; unsigned bounds come from it and the operands, signed
// ones from the unsigned when they do not cross the sign boundary.
template <class S>
void signed_from_unsigned(Ranges<S> d) {
  if (static_cast<S>(d.umin) <= static_cast<S>(d.umax)) {
    d.smin = static_cast<S>(d.umin);
    d.smax = static_cast<S>(d.umax);
  } else {
    d.smin = std::numeric_limits<S>::min();
    d.smax = std::numeric_limits<S>::max();
  }
}

void bitwise32(RegState& d, const RegState& s, std::uint8_t op) {
  const Tnum t = d.var_off.subreg();
  if (s.var_off.subreg().is_const() && t.is_const()) {
    d.u32_min = d.u32_max = static_cast<u32>(t.value);
    d.s32_min = d.s32_max = static_cast<s32>(t.value);
    return;
  }
  if (op == BPF_AND) {
    d.u32_min = static_cast<u32>(t.value);
    d.u32_max = std::min(d.u32_max, s.u32_max);
  } else if (op == BPF_OR) {
    d.u32_min = std::max(d.u32_min, s.u32_min);
    d.u32_max = static_cast<u32>(t.value | t.mask);
  } else {
    d.u32_min = static_cast<u32>(t.value);
    d.u32_max = static_cast<u32>(t.value | t.mask);
  }
  signed_from_unsigned(ranges32(d));
}

void bitwise64(RegState& d, const RegState& s, std::uint8_t op) {
  const Tnum t = d.var_off;
  if (s.var_off.is_const() && t.is_const()) {
    mark_known(d, t.value);
    return;
  }
  if (op == BPF_AND) {
    d.umin = t.value;
    d.umax = std::min(d.umax, s.umax);
  } else if (op == BPF_OR) {
    d.umin = std::max(d.umin, s.umin);
    d.umax = t.value | t.mask;
  } else {
    d.umin = t.value;
    d.umax = t.value | t.mask;
  }
  signed_from_unsigned(ranges64(d));
  update_bounds_from_tnum(d);
}

void lsh32_bounds(RegState& d, u64 umin_val, u64 umax_val) {
  d.s32_min = kS32Min;
  d.s32_max = kS32Max;
  if (umax_val > 31 || d.u32_max > (1ULL << (31 - umax_val))) {
    d.u32_min = 0;
    d.u32_max = kU32Max;
  } else {
    d.u32_min <<= umin_val;
    d.u32_max <<= umax_val;
  }
}

void shift32(RegState& d, const RegState& s, std::uint8_t op) {
  const u32 umin_val = s.u32_min;
  const u32 umax_val = s.u32_max;
  const Tnum sub = d.var_off.subreg();
  if (op == BPF_LSH) {
    lsh32_bounds(d, umin_val, umax_val);
    d.var_off = sub.lshift(static_cast<std::uint8_t>(umin_val)).subreg();
  } else if (op == BPF_RSH) {
    d.s32_min = kS32Min;
    d.s32_max = kS32Max;
    d.var_off = sub.rshift(static_cast<std::uint8_t>(umin_val));
    d.u32_min >>= umax_val;
    d.u32_max >>= umin_val;
  } else {
    d.s32_min >>= umin_val;
    d.s32_max >>= umin_val;
    d.var_off = sub.arshift(static_cast<std::uint8_t>(umin_val), 32).subreg();
    d.u32_min = 0;
    d.u32_max = kU32Max;
  }
  set_unbounded(ranges64(d));
  update_bounds_from_tnum(d);
}

void shift64(RegState& d, const RegState& s, std::uint8_t op) {
  const u64 umin_val = s.umin;
  const u64 umax_val = s.umax;
  if (op == BPF_LSH) {
    // x << 32 keeps non-negative 32-bit signed bounds (the sign-extension idiom <<32 s>>32).
    const bool by32 = umin_val == 32 && umax_val == 32;
    d.smax = by32 && d.s32_max >= 0 ? static_cast<s64>(d.s32_max) << 32 : kS64Max;
    d.smin = by32 && d.s32_min >= 0 ? static_cast<s64>(d.s32_min) << 32 : kS64Min;
    if (d.umax > (1ULL << (63 - umax_val))) {
      d.umin = 0;
      d.umax = ~0ULL;
    } else {
      d.umin <<= umin_val;
      d.umax <<= umax_val;
    }
    lsh32_bounds(d, umin_val, umax_val);
    d.var_off = d.var_off.lshift(static_cast<std::uint8_t>(umin_val));
  } else if (op == BPF_RSH) {
    d.smin = kS64Min;
    d.smax = kS64Max;
    d.var_off = d.var_off.rshift(static_cast<std::uint8_t>(umin_val));
    d.umin >>= umax_val;
    d.umax >>= umin_val;
    set_unbounded(ranges32(d));
  } else {
    d.smin >>= umin_val;
    d.smax >>= umin_val;
    d.var_off = d.var_off.arshift(static_cast<std::uint8_t>(umin_val), 64);
    d.umin = 0;
    d.umax = ~0ULL;
    set_unbounded(ranges32(d));
  }
  update_bounds_from_tnum(d);
}

bool safe_to_compute(const RegState& src, std::uint8_t op, bool alu32) {
  switch (op) {
    case BPF_ADD:
    case BPF_SUB:
    case BPF_AND:
    case BPF_OR:
    case BPF_XOR:
    case BPF_MUL:
      return true;
    case BPF_LSH:
    case BPF_RSH:
    case BPF_ARSH: {
      const bool is_const = alu32 ? src.var_off.subreg().is_const() : src.var_off.is_const();
      return is_const && src.umax < (alu32 ? 32U : 64U);
    }
    default:
      return false;
  }
}

}  // namespace

bool RegState::not_null() const {
  // The kernel's list, not every pointer that cannot in fact be NULL: the ctx and stack pointers
  // are absent, so `if r1 == 0` on the ctx walks both ways (verifier_unpriv_perf relies on it).
  switch (type) {
    case RegType::kConstPtrToMap:
      return true;
    case RegType::kPtrToMapValue:
    case RegType::kPtrToRingbufMem:
    case RegType::kPtrToMem:
      return !maybe_null;
    case RegType::kPtrToBtfId:  // is_trusted_reg
      return !maybe_null && (btf_flags & kBtfTrusted) && !(btf_flags & kBtfUntrusted);
    default:
      return false;
  }
}

void mark_unbounded(RegState& reg) {
  set_unbounded(ranges64(reg));
  set_unbounded(ranges32(reg));
}

void mark32_unbounded(RegState& reg) {
  set_unbounded(ranges32(reg));
}

void mark_known(RegState& reg, std::uint64_t value) {
  reg.var_off = Tnum::constant(value);
  reg.smin = reg.smax = static_cast<s64>(value);
  reg.umin = reg.umax = value;
  reg.s32_min = reg.s32_max = static_cast<s32>(value);
  reg.u32_min = reg.u32_max = static_cast<u32>(value);
}

RegState make_unknown_scalar() {
  RegState r;
  r.type = RegType::kScalar;
  return r;
}

RegState make_known_scalar(std::uint64_t value) {
  RegState r = make_unknown_scalar();
  mark_known(r, value);
  return r;
}

RegState make_pointer(RegType type) {
  RegState r;
  r.type = type;
  mark_known(r, 0);
  return r;
}

void reg_bounds_sync(RegState& r) {
  update_bounds_from_tnum(r);
  for (int i = 0; i < 2; ++i) {
    deduce32(r);
    deduce64(r);
    deduce_mixed(r);
  }
  bound_offset(r);
  update_bounds_from_tnum(r);
}

void add_ranges64(RegState& dst, const RegState& src) {
  add_ranges(ranges64(dst), ranges64(src));
}

void sub_ranges64(RegState& dst, const RegState& src) {
  sub_ranges(ranges64(dst), ranges64(src));
}

void scalar_alu(RegState& d, const RegState& s, std::uint8_t op, bool alu32) {
  if (!safe_to_compute(s, op, alu32)) {
    d = make_unknown_scalar();
    d.id = 0;
    return;
  }
  switch (op) {
    case BPF_ADD:
      add_ranges(ranges32(d), ranges32(s));
      add_ranges(ranges64(d), ranges64(s));
      d.var_off = tnum_add(d.var_off, s.var_off);
      break;
    case BPF_SUB:
      sub_ranges(ranges32(d), ranges32(s));
      sub_ranges(ranges64(d), ranges64(s));
      d.var_off = tnum_sub(d.var_off, s.var_off);
      break;
    case BPF_MUL:
      d.var_off = tnum_mul(d.var_off, s.var_off);
      mul_ranges(ranges32(d), ranges32(s));
      mul_ranges(ranges64(d), ranges64(s));
      break;
    case BPF_AND:
      d.var_off = tnum_and(d.var_off, s.var_off);
      bitwise32(d, s, op);
      bitwise64(d, s, op);
      break;
    case BPF_OR:
      d.var_off = tnum_or(d.var_off, s.var_off);
      bitwise32(d, s, op);
      bitwise64(d, s, op);
      break;
    case BPF_XOR:
      d.var_off = tnum_xor(d.var_off, s.var_off);
      bitwise32(d, s, op);
      bitwise64(d, s, op);
      break;
    default:  // shifts
      if (alu32) {
        shift32(d, s, op);
      } else {
        shift64(d, s, op);
      }
      break;
  }
  d.id = 0;
  if (alu32) zext_32_to_64(d);
  reg_bounds_sync(d);
}

}  // namespace userperf::bpf
