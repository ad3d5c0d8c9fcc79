// ALU instructions (check_alu_op: scalar bounds through scalar_bounds.cpp, pointer arithmetic as
// adjust_ptr_min_max_vals) and conditional jumps (check_cond_jmp_op: decided by the bounds, or a
// fork with both sides narrowed, NULL checks of map values).
#include "bpf/verifier/checker.hpp"

#include <cerrno>
#include <cinttypes>
#include <limits>
#include <utility>

namespace userperf::bpf {
namespace {

const char* alu_name(std::uint8_t op) {
  static const char* const names[] = {
      "+=", "-=", "*=", "/=", "|=", "&=", "<<=", ">>=", "neg", "%=", "^=", "=", "s>>=", "endian"};
  return names[(op >> 4) & 0xf];
}

}  // namespace

int Checker::do_alu_mov(const Insn& in) {
  const bool is64 = insn_class(in.code) == BPF_ALU64;
  if (insn_source(in.code) == BPF_X) {
    const bool off_ok = in.off == 0 || in.off == 8 || in.off == 16 || (is64 && in.off == 32);
    if (!off_ok || in.imm) return log_.reject(EINVAL, "BPF_MOV uses reserved fields");
    if (int err = check_read(in.src_reg)) return err;
  } else if (in.src_reg || in.off) {
    return log_.reject(EINVAL, "BPF_MOV uses reserved fields");
  }
  if (int err = check_write(in.dst_reg)) return err;
  if (insn_source(in.code) == BPF_K) {
    reg(in.dst_reg) =
        make_known_scalar(is64 ? static_cast<std::uint64_t>(static_cast<std::int64_t>(in.imm))
                               : static_cast<std::uint32_t>(in.imm));
    return 0;
  }
  RegState& src = reg(in.src_reg);
  if (!src.is_scalar()) {
    // Privileged: a pointer copy, or an unknown scalar for partial / sign-extended copies.
    reg(in.dst_reg) = is64 && in.off == 0 ? src : make_unknown_scalar();
    return 0;
  }
  if (in.off == 0) {
    if (is64 || src.umax <= 0xffffffffULL) {
      if (!src.id && !src.var_off.is_const()) src.id = ++id_gen_;
    }
    RegState copy = src;
    if (!is64) {
      if (src.umax > 0xffffffffULL) copy.id = 0;
      zext_32_to_64(copy);
      reg_bounds_sync(copy);
    }
    reg(in.dst_reg) = copy;
    return 0;
  }
  // A sign-extending copy of a value whose narrow sign bit is never set equals its source: the two
  // stay linked, so a bound found on either applies to both (the kernel's no_sext).
  const bool no_sext = src.umax < (1ULL << (in.off - 1));
  if (no_sext && !src.id && !src.var_off.is_const()) src.id = ++id_gen_;
  RegState copy = src;
  if (!no_sext) copy.id = 0;
  if (is64) {
    coerce_to_size_sx(copy, in.off / 8);
  } else {
    coerce_subreg_to_size_sx(copy, in.off / 8);
  }
  reg(in.dst_reg) = copy;
  return 0;
}

bool Checker::sane_offset(const RegState& r, const RegState& ptr, int& err) {
  const char* type = reg_type_name(ptr);
  const bool known = r.var_off.is_const();
  const auto val = static_cast<std::int64_t>(r.var_off.value);
  if (known && (val >= kMaxVarOff || val <= -kMaxVarOff)) {
    err = log_.reject(EINVAL, "math between %s pointer and %" PRId64 " is not allowed", type, val);
    return false;
  }
  if (r.off >= kMaxVarOff || r.off <= -kMaxVarOff) {
    err = log_.reject(EINVAL, "%s pointer offset %d is not allowed", type, r.off);
    return false;
  }
  if (r.smin == std::numeric_limits<std::int64_t>::min()) {
    err = log_.reject(
        EINVAL, "math between %s pointer and register with unbounded min value is not allowed",
        type);
    return false;
  }
  if (r.smin >= kMaxVarOff || r.smin <= -kMaxVarOff) {
    err = log_.reject(EINVAL, "value %" PRId64 " makes %s pointer be out of bounds", r.smin, type);
    return false;
  }
  return true;
}

int Checker::adjust_ptr(const Insn& in, const RegState& ptr, const RegState& off, RegState& dst,
                        bool dst_is_off) {
  const std::uint8_t op = insn_op(in.code);
  const int d = in.dst_reg;
  const bool known = off.var_off.is_const();
  if (insn_class(in.code) != BPF_ALU64) {
    if (op == BPF_SUB) {
      dst = make_unknown_scalar();
      return 0;
    }
    return log_.reject(EACCES, "R%d 32-bit pointer arithmetic prohibited", d);
  }
  if (ptr.maybe_null) {
    return log_.reject(EACCES, "R%d pointer arithmetic on %s prohibited, null-check it first", d,
                       reg_type_name(ptr));
  }
  switch (ptr.type) {
    case RegType::kPtrToCtx:
    case RegType::kPtrToMapValue:
    case RegType::kPtrToStack:
    case RegType::kPtrToRingbufMem:
    case RegType::kPtrToMem:
    case RegType::kPtrToBtfId:
      break;
    case RegType::kConstPtrToMap:
      if (known && off.smin == 0 && op == BPF_ADD) break;
      [[fallthrough]];
    default:
      return log_.reject(EACCES, "R%d pointer arithmetic on %s prohibited", d, reg_type_name(ptr));
  }
  if ((known && (off.smin != off.smax || off.umin != off.umax)) || off.smin > off.smax ||
      off.umin > off.umax) {
    dst = make_unknown_scalar();
    return 0;
  }
  int err = 0;
  if (!sane_offset(off, ptr, err) || !sane_offset(ptr, ptr, err)) return err;
  RegState out = ptr;
  mark32_unbounded(out);
  switch (op) {
    case BPF_ADD: {
      const std::int64_t fixed = static_cast<std::int64_t>(ptr.off) + off.smin;
      if (known && fixed == static_cast<std::int32_t>(fixed)) {
        out.off = static_cast<std::int32_t>(fixed);
        break;
      }
      add_ranges64(out, off);
      out.var_off = tnum_add(ptr.var_off, off.var_off);
      break;
    }
    case BPF_SUB: {
      if (dst_is_off) return log_.reject(EACCES, "R%d tried to subtract pointer from scalar", d);
      if (ptr.type == RegType::kPtrToStack) {
        return log_.reject(EACCES, "R%d subtraction from stack pointer prohibited", d);
      }
      const std::int64_t fixed = static_cast<std::int64_t>(ptr.off) - off.smin;
      if (known && fixed == static_cast<std::int32_t>(fixed)) {
        out.off = static_cast<std::int32_t>(fixed);
        break;
      }
      sub_ranges64(out, off);
      out.var_off = tnum_sub(ptr.var_off, off.var_off);
      break;
    }
    case BPF_AND:
    case BPF_OR:
    case BPF_XOR:
      return log_.reject(EACCES, "R%d bitwise operator %s on pointer prohibited", d, alu_name(op));
    default:
      return log_.reject(EACCES, "R%d pointer arithmetic with %s operator prohibited", d,
                         alu_name(op));
  }
  if (!sane_offset(out, ptr, err)) return err;
  reg_bounds_sync(out);
  dst = out;
  return 0;
}

int Checker::do_alu(const Insn& in) {
  const std::uint8_t op = insn_op(in.code);
  const bool is64 = insn_class(in.code) == BPF_ALU64;
  if (op == BPF_MOV) return do_alu_mov(in);
  if (op == BPF_NEG || op == BPF_END) {
    if (op == BPF_NEG) {
      if (insn_source(in.code) != BPF_K || in.src_reg || in.off || in.imm) {
        return log_.reject(EINVAL, "BPF_NEG uses reserved fields");
      }
    } else if (in.src_reg || in.off || (in.imm != 16 && in.imm != 32 && in.imm != 64) ||
               (is64 && insn_source(in.code) != BPF_TO_LE)) {
      return log_.reject(EINVAL, "BPF_END uses reserved fields");
    }
    if (int err = check_read(in.dst_reg)) return err;
    if (int err = check_write(in.dst_reg)) return err;
    RegState& d = reg(in.dst_reg);
    if (op == BPF_NEG && d.is_scalar()) {
      RegState zero = make_known_scalar(0);
      scalar_alu(zero, d, BPF_SUB, !is64);
      d = zero;
    } else if (op == BPF_END && d.is_scalar()) {
      scalar_byte_swap(d, is64, insn_source(in.code) == BPF_TO_LE, in.imm);
    } else {
      d = make_unknown_scalar();
    }
    return 0;
  }
  const bool signed_div = in.off == 1;
  if (insn_source(in.code) == BPF_X) {
    if (in.imm || (in.off != 0 && in.off != 1) || (signed_div && op != BPF_MOD && op != BPF_DIV)) {
      return log_.reject(EINVAL, "BPF_ALU uses reserved fields");
    }
    if (int err = check_read(in.src_reg)) return err;
  } else if (in.src_reg || (in.off != 0 && in.off != 1) ||
             (signed_div && op != BPF_MOD && op != BPF_DIV)) {
    return log_.reject(EINVAL, "BPF_ALU uses reserved fields");
  }
  if (int err = check_read(in.dst_reg)) return err;
  if ((op == BPF_MOD || op == BPF_DIV) && insn_source(in.code) == BPF_K && in.imm == 0) {
    return log_.reject(EINVAL, "div by zero");
  }
  if ((op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH) && insn_source(in.code) == BPF_K) {
    if (in.imm < 0 || in.imm >= (is64 ? 64 : 32))
      return log_.reject(EINVAL, "invalid shift %d", in.imm);
  }
  if (int err = check_write(in.dst_reg)) return err;
  RegState& dst = reg(in.dst_reg);
  const RegState src =
      insn_source(in.code) == BPF_X
          ? reg(in.src_reg)
          : make_known_scalar(static_cast<std::uint64_t>(static_cast<std::int64_t>(in.imm)));
  if (src.is_pointer()) {
    if (dst.is_pointer()) {
      if (op == BPF_SUB) {
        dst = make_unknown_scalar();
        return 0;
      }
      return log_.reject(EACCES, "R%d pointer %s pointer prohibited", in.dst_reg, alu_name(op));
    }
    RegState out;
    const RegState off = dst;
    need_precise_reg(in.dst_reg);
    if (int err = adjust_ptr(in, src, off, out, true)) return err;
    dst = out;
    return 0;
  }
  if (dst.is_pointer()) {
    RegState out;
    const RegState ptr = dst;
    if (insn_source(in.code) == BPF_X) need_precise_reg(in.src_reg);
    if (int err = adjust_ptr(in, ptr, src, out, false)) return err;
    dst = out;
    return 0;
  }
  scalar_alu(dst, src, op, !is64);
  return 0;
}

// ---- conditional jumps

void Checker::mark_null_checked(std::uint32_t id, bool is_null) {
  auto mark = [&](RegState& r) {
    if (!r.maybe_null || r.id != id) return;
    if (is_null) {
      r = make_known_scalar(0);
    } else {
      r.maybe_null = false;
      r.id = 0;
      // mark_ptr_not_null_reg: a map-in-map's value is its inner map, typed by the template.
      if (r.type == RegType::kPtrToMapValue && r.map >= 0 &&
          static_cast<std::size_t>(r.map) < walk_maps_.object_maps &&
          walk_maps_.inner_of[static_cast<std::size_t>(r.map)] >= 0) {
        r.type = RegType::kConstPtrToMap;
        r.map = walk_maps_.inner_of[static_cast<std::size_t>(r.map)];
      }
    }
  };
  // A record that was never reserved holds no reference (mark_ptr_or_null_regs).
  if (is_null) {
    for (const RefState& ref : cur_.refs) {
      if (ref.id == id) {
        release_reference(id);
        break;
      }
    }
  }
  for (FuncState& f : cur_.frames) {
    for (RegState& r : f.regs) mark(r);
    for (StackSlot& s : f.stack) {
      if (s.type[7] == StackByte::kSpill) mark(s.spilled);
    }
  }
}

void Checker::sync_linked(std::uint32_t id, const RegState& known) {
  if (id == 0) return;
  auto sync = [&](RegState& r) {
    if (r.type == RegType::kScalar && r.id == id) r = known;
  };
  for (FuncState& f : cur_.frames) {
    for (RegState& r : f.regs) sync(r);
    for (StackSlot& s : f.stack) {
      if (s.type[7] == StackByte::kSpill) sync(s.spilled);
    }
  }
}

int Checker::do_cond_jmp(std::uint32_t idx, const Insn& in, std::uint32_t& next) {
  const bool jmp32 = insn_class(in.code) == BPF_JMP32;
  const std::uint8_t op = insn_op(in.code);
  const bool x = insn_source(in.code) == BPF_X;
  if (x) {
    if (in.imm != 0) return log_.reject(EINVAL, "BPF_JMP/JMP32 uses reserved fields");
    if (int err = check_read(in.src_reg)) return err;
  } else if (in.src_reg != 0) {
    return log_.reject(EINVAL, "BPF_JMP/JMP32 uses reserved fields");
  }
  if (int err = check_read(in.dst_reg)) return err;
  const std::uint32_t target =
      static_cast<std::uint32_t>(static_cast<std::int64_t>(idx) + in.off + 1);
  RegState dst = reg(in.dst_reg);
  RegState src =
      x ? reg(in.src_reg)
        : make_known_scalar(static_cast<std::uint64_t>(static_cast<std::int64_t>(in.imm)));

  int taken = -1;
  if (dst.is_pointer() || src.is_pointer()) {
    // Only a non-NULL pointer against the constant 0 is decided.
    const RegState* ptr = dst.is_pointer() ? &dst : &src;
    const RegState* other = dst.is_pointer() ? &src : &dst;
    if (!jmp32 && other->is_scalar() && other->is_null() && ptr->not_null()) {
      if (op == BPF_JEQ) taken = 0;
      if (op == BPF_JNE) taken = 1;
    }
  } else {
    taken = scalar_branch_taken(dst, src, op, jmp32);
  }
  if (taken >= 0) {
    // The value decided the branch: pruning must respect it.
    need_precise_reg(in.dst_reg);
    if (x) need_precise_reg(in.src_reg);
    if (taken == 1) next = target;
    return 0;
  }

  // Both ways: the jump-taken state is pushed, this path falls through.
  VerifierState fallthrough = cur_;
  if (dst.is_scalar() && src.is_scalar()) {
    RegState t_dst = dst;
    RegState t_src = src;
    scalar_refine(t_dst, t_src, op, jmp32);
    RegState f_dst = dst;
    RegState f_src = src;
    scalar_refine(f_dst, f_src, reverse_jump_op(op), jmp32);
    // Taken branch state
    reg(in.dst_reg) = t_dst;
    sync_linked(dst.id, t_dst);
    if (x) {
      reg(in.src_reg) = t_src;
      sync_linked(src.id, t_src);
    }
    if (int err = push_branch(target, idx)) return err;
    cur_ = std::move(fallthrough);
    reg(in.dst_reg) = f_dst;
    sync_linked(dst.id, f_dst);
    if (x) {
      reg(in.src_reg) = f_src;
      sync_linked(src.id, f_src);
    }
    return 0;
  }
  // NULL checks: `if rX == 0` / `if rX != 0` on a maybe-NULL pointer (64-bit only).
  std::uint32_t null_id = 0;
  if (!jmp32 && (op == BPF_JEQ || op == BPF_JNE)) {
    if (dst.maybe_null && src.is_scalar() && src.is_null()) null_id = dst.id;
    if (x && src.maybe_null && dst.is_scalar() && dst.is_null()) null_id = src.id;
  }
  if (null_id) mark_null_checked(null_id, op == BPF_JEQ);
  if (int err = push_branch(target, idx)) return err;
  cur_ = std::move(fallthrough);
  if (null_id) mark_null_checked(null_id, op != BPF_JEQ);
  return 0;
}

}  // namespace userperf::bpf
