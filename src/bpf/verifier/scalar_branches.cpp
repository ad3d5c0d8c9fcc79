// Conditional jumps between scalars: the same deductions the kernel makes (is_branch_taken,
// regs_refine_cond_op), written from their rules, on the ranges scalar_bounds.cpp keeps.
#include <linux/bpf.h>

#include <algorithm>
#include <bit>
#include <utility>

#include "bpf/isa/int_types.hpp"
#include "bpf/verifier/reg_state.hpp"

namespace userperf::bpf {

std::uint8_t reverse_jump_op(std::uint8_t op) {
  switch (op) {
    case BPF_JEQ:
      return BPF_JNE;
    case BPF_JNE:
      return BPF_JEQ;
    case BPF_JSET:
      return kJsetFalse;
    case kJsetFalse:
      return BPF_JSET;
    case BPF_JGT:
      return BPF_JLE;
    case BPF_JLE:
      return BPF_JGT;
    case BPF_JGE:
      return BPF_JLT;
    case BPF_JLT:
      return BPF_JGE;
    case BPF_JSGT:
      return BPF_JSLE;
    case BPF_JSLE:
      return BPF_JSGT;
    case BPF_JSGE:
      return BPF_JSLT;
    case BPF_JSLT:
      return BPF_JSGE;
    default:
      return op;
  }
}

std::uint8_t flip_jump_op(std::uint8_t op) {
  switch (op) {
    case BPF_JGT:
      return BPF_JLT;
    case BPF_JLT:
      return BPF_JGT;
    case BPF_JGE:
      return BPF_JLE;
    case BPF_JLE:
      return BPF_JGE;
    case BPF_JSGT:
      return BPF_JSLT;
    case BPF_JSLT:
      return BPF_JSGT;
    case BPF_JSGE:
      return BPF_JSLE;
    case BPF_JSLE:
      return BPF_JSGE;
    default:
      return op;
  }
}

namespace {
struct View {  // the ranges a comparison of the given width sees
  u64 umin, umax;
  s64 smin, smax;
  Tnum t;
  bool is_const;
  u64 value;
};

View view(const RegState& r, bool jmp32) {
  if (jmp32) {
    const Tnum t = r.var_off.subreg();
    return {r.u32_min, r.u32_max, r.s32_min, r.s32_max, t, t.is_const(), t.value};
  }
  return {r.umin, r.umax, r.smin, r.smax, r.var_off, r.var_off.is_const(), r.var_off.value};
}
}  // namespace

int scalar_branch_taken(const RegState& a, const RegState& b, std::uint8_t op, bool jmp32) {
  View x = view(a, jmp32);
  View y = view(b, jmp32);
  switch (op) {
    case BPF_JEQ:
    case BPF_JNE: {
      int eq = -1;
      if (x.is_const && y.is_const) {
        eq = x.value == y.value;
      } else if (x.umin > y.umax || x.umax < y.umin || x.smin > y.smax || x.smax < y.smin) {
        eq = 0;
      } else if (!jmp32 && (a.u32_min > b.u32_max || a.u32_max < b.u32_min ||
                            a.s32_min > b.s32_max || a.s32_max < b.s32_min)) {
        eq = 0;
      }
      if (eq < 0) return -1;
      return op == BPF_JEQ ? eq : !eq;
    }
    case BPF_JSET: {
      if (!y.is_const) std::swap(x, y);
      if (!y.is_const) return -1;
      if ((~x.t.mask & x.t.value) & y.value) return 1;
      if (!((x.t.mask | x.t.value) & y.value)) return 0;
      return -1;
    }
    case BPF_JGT:
      if (x.umin > y.umax) return 1;
      if (x.umax <= y.umin) return 0;
      return -1;
    case BPF_JSGT:
      if (x.smin > y.smax) return 1;
      if (x.smax <= y.smin) return 0;
      return -1;
    case BPF_JLT:
      if (x.umax < y.umin) return 1;
      if (x.umin >= y.umax) return 0;
      return -1;
    case BPF_JSLT:
      if (x.smax < y.smin) return 1;
      if (x.smin >= y.smax) return 0;
      return -1;
    case BPF_JGE:
      if (x.umin >= y.umax) return 1;
      if (x.umax < y.umin) return 0;
      return -1;
    case BPF_JSGE:
      if (x.smin >= y.smax) return 1;
      if (x.smax < y.smin) return 0;
      return -1;
    case BPF_JLE:
      if (x.umax <= y.umin) return 1;
      if (x.umin > y.umax) return 0;
      return -1;
    case BPF_JSLE:
      if (x.smax <= y.smin) return 1;
      if (x.smin > y.smax) return 0;
      return -1;
    default:
      return -1;
  }
}

void scalar_refine(RegState& a, RegState& b, std::uint8_t op, bool jmp32) {
  RegState* r1 = &a;
  RegState* r2 = &b;
  // Only <, <=, ==, != and the bit tests: swap operands for > and >=.
  switch (op) {
    case BPF_JGE:
    case BPF_JGT:
    case BPF_JSGE:
    case BPF_JSGT:
      std::swap(r1, r2);
      op = flip_jump_op(op);
      break;
    default:
      break;
  }
  auto const_of = [jmp32](const RegState& r) {
    return jmp32 ? r.var_off.subreg().is_const() : r.var_off.is_const();
  };
  switch (op) {
    case BPF_JEQ:
      if (jmp32) {
        r1->u32_min = r2->u32_min = std::max(r1->u32_min, r2->u32_min);
        r1->u32_max = r2->u32_max = std::min(r1->u32_max, r2->u32_max);
        r1->s32_min = r2->s32_min = std::max(r1->s32_min, r2->s32_min);
        r1->s32_max = r2->s32_max = std::min(r1->s32_max, r2->s32_max);
        const Tnum t = tnum_intersect(r1->var_off.subreg(), r2->var_off.subreg());
        r1->var_off = r1->var_off.with_subreg(t);
        r2->var_off = r2->var_off.with_subreg(t);
      } else {
        r1->umin = r2->umin = std::max(r1->umin, r2->umin);
        r1->umax = r2->umax = std::min(r1->umax, r2->umax);
        r1->smin = r2->smin = std::max(r1->smin, r2->smin);
        r1->smax = r2->smax = std::min(r1->smax, r2->smax);
        r1->var_off = r2->var_off = tnum_intersect(r1->var_off, r2->var_off);
      }
      break;
    case BPF_JNE: {
      if (!const_of(*r2)) std::swap(r1, r2);
      if (!const_of(*r2)) break;
      const u64 v = r2->var_off.value;
      if (jmp32) {
        if (r1->u32_min == static_cast<u32>(v)) r1->u32_min++;
        if (r1->u32_max == static_cast<u32>(v)) r1->u32_max--;
        if (r1->s32_min == static_cast<s32>(v)) r1->s32_min++;
        if (r1->s32_max == static_cast<s32>(v)) r1->s32_max--;
      } else {
        if (r1->umin == v) r1->umin++;
        if (r1->umax == v) r1->umax--;
        if (r1->smin == static_cast<s64>(v)) r1->smin++;
        if (r1->smax == static_cast<s64>(v)) r1->smax--;
      }
      break;
    }
    case BPF_JSET: {
      if (!const_of(*r2)) std::swap(r1, r2);
      if (!const_of(*r2)) break;
      const u64 v = jmp32 ? static_cast<u32>(r2->var_off.value) : r2->var_off.value;
      if (!std::has_single_bit(v)) break;
      if (jmp32) {
        r1->var_off = r1->var_off.with_subreg(tnum_or(r1->var_off.subreg(), Tnum::constant(v)));
      } else {
        r1->var_off = tnum_or(r1->var_off, Tnum::constant(v));
      }
      break;
    }
    case kJsetFalse: {
      if (!const_of(*r2)) std::swap(r1, r2);
      if (!const_of(*r2)) break;
      const u64 v = r2->var_off.value;
      // The kernel (6.18) forgets the ranges before narrowing the tnum ("to avoid invariant
      // violations if we're on a dead branch"); only what the tnum gives survives the branch.
      mark_unbounded(*r1);
      if (jmp32) {
        r1->var_off = r1->var_off.with_subreg(tnum_and(r1->var_off.subreg(), Tnum::constant(~v)));
      } else {
        r1->var_off = tnum_and(r1->var_off, Tnum::constant(~v));
      }
      break;
    }
    case BPF_JLE:
      if (jmp32) {
        r1->u32_max = std::min(r1->u32_max, r2->u32_max);
        r2->u32_min = std::max(r1->u32_min, r2->u32_min);
      } else {
        r1->umax = std::min(r1->umax, r2->umax);
        r2->umin = std::max(r1->umin, r2->umin);
      }
      break;
    case BPF_JLT:
      if (jmp32) {
        r1->u32_max = std::min(r1->u32_max, r2->u32_max - 1);
        r2->u32_min = std::max(r1->u32_min + 1, r2->u32_min);
      } else {
        r1->umax = std::min(r1->umax, r2->umax - 1);
        r2->umin = std::max(r1->umin + 1, r2->umin);
      }
      break;
    case BPF_JSLE:
      if (jmp32) {
        r1->s32_max = std::min(r1->s32_max, r2->s32_max);
        r2->s32_min = std::max(r1->s32_min, r2->s32_min);
      } else {
        r1->smax = std::min(r1->smax, r2->smax);
        r2->smin = std::max(r1->smin, r2->smin);
      }
      break;
    case BPF_JSLT:
      if (jmp32) {
        r1->s32_max = std::min(r1->s32_max, r2->s32_max - 1);
        r2->s32_min = std::max(r1->s32_min + 1, r2->s32_min);
      } else {
        r1->smax = std::min(r1->smax, r2->smax - 1);
        r2->smin = std::max(r1->smin + 1, r2->smin);
      }
      break;
    default:
      break;
  }
  reg_bounds_sync(a);
  reg_bounds_sync(b);
}

}  // namespace userperf::bpf
