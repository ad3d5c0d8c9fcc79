// Loads, stores and atomics (check_mem_access, check_atomic): alignment, the stack per byte with
// spills and fills, map values within value_size, the ctx fields a perf_event program may read,
// and ld_imm64 of constants, maps and map values.
#include "bpf/verifier/checker.hpp"

#include <cerrno>
#include <cinttypes>
#include <limits>

#include "bpf/verifier/ctx_rewrite.hpp"

namespace userperf::bpf {

StackSlot& Checker::slot(FuncState& f, std::size_t spi) {
  if (f.stack.size() <= spi) f.stack.resize(spi + 1);
  return f.stack[spi];
}

void Checker::note_stack_depth(const RegState& ptr, std::int64_t min_off) {
  // grow_stack_state: the stack grows in whole 8-byte slots, and the function's depth with it.
  const FuncState& f = cur_.frames[ptr.frameno];
  auto& depth = subprog_depth_[f.subprog];
  if (min_off >= 0) return;
  const auto slots = static_cast<std::uint32_t>((-min_off + 7) / 8 * 8);
  if (slots > depth) depth = slots;
}

int Checker::check_stack_bounds(int regno, const RegState& ptr, int off, int size, const char* what,
                                std::int64_t& min_off, std::int64_t& max_off) {
  const std::int64_t base = static_cast<std::int64_t>(off) + ptr.off;
  if (ptr.var_off.is_const()) {
    min_off = static_cast<std::int64_t>(ptr.var_off.value) + base;
    max_off = min_off + size;
  } else {
    if (ptr.smax >= kMaxVarOff || ptr.smin <= -kMaxVarOff) {
      return log_.reject(EACCES, "invalid unbounded variable-offset%s stack R%d", what, regno);
    }
    min_off = ptr.smin + base;
    max_off = ptr.smax + base + size;
  }
  if (min_off < -kMaxStack || min_off > -1 || max_off > 0 || size < 0) {
    // Below the stack: EACCES; into r10 and above, or a negative size: EINVAL.
    const int err = min_off < -kMaxStack || min_off > -1 ? EACCES : EINVAL;
    if (ptr.var_off.is_const()) {
      return log_.reject(err, "invalid%s stack R%d off=%" PRId64 " size=%d", what, regno,
                         base + static_cast<std::int64_t>(ptr.var_off.value), size);
    }
    return log_.reject(err,
                       "invalid variable-offset%s stack R%d var_off=%s off=%" PRId64 " size=%d",
                       what, regno, ptr.var_off.str().c_str(), base, size);
  }
  note_stack_depth(ptr, min_off);
  return 0;
}

void Checker::stack_write_fixed(FuncState& f, int off, int size, const RegState* value, bool is_st,
                                std::int32_t imm) {
  const int byte_slot = -off - 1;
  const auto spi = static_cast<std::size_t>(byte_slot / 8);
  StackSlot& s = slot(f, spi);
  const bool aligned = off % 8 == 0;
  auto spill = [&](const RegState& r) {
    s.spilled = r;
    for (int i = 8; i > 8 - size; --i) s.type[static_cast<std::size_t>(i - 1)] = StackByte::kSpill;
    for (int i = 8 - size; i > 0; --i) {
      StackByte& b = s.type[static_cast<std::size_t>(i - 1)];
      if (b == StackByte::kSpill) b = StackByte::kMisc;
    }
  };
  if (value && aligned && value->is_scalar()) {
    spill(*value);
    if (size < 8 && value->umax >> (size * 8)) s.spilled.id = 0;
    return;
  }
  if (!value && aligned && is_st) {
    spill(make_known_scalar(static_cast<std::uint64_t>(static_cast<std::int64_t>(imm))));
    return;
  }
  if (value && value->is_pointer()) {  // size 8, checked by the caller
    spill(*value);
    return;
  }
  s.spilled = RegState{};
  for (StackByte& b : s.type) {
    if (b == StackByte::kSpill) b = StackByte::kMisc;
  }
  const bool zero = value ? value->is_null() : (is_st && imm == 0);
  for (int i = 0; i < size; ++i) {
    s.type[static_cast<std::size_t>((byte_slot - i) % 8)] =
        zero ? StackByte::kZero : StackByte::kMisc;
  }
}

int Checker::stack_read_fixed(FuncState& f, int off, int size, RegState& out) {
  const int byte_slot = -off - 1;
  const auto spi = static_cast<std::size_t>(byte_slot / 8);
  StackSlot& s = slot(f, spi);
  if (s.type[7] == StackByte::kSpill) {
    int spill_size = 1;
    for (int i = 7; i > 0 && s.type[static_cast<std::size_t>(i - 1)] == StackByte::kSpill; --i) {
      ++spill_size;
    }
    if (size == 8 && spill_size == 8) {
      out = s.spilled;
      return 0;
    }
    if (!s.spilled.is_scalar()) return log_.reject(EACCES, "invalid size of register fill");
    if (size <= spill_size && off % 8 == 0) {
      out = s.spilled;
      if (out.umax >> (size * 8)) out.id = 0;
      return 0;
    }
  }
  int zeros = 0;
  int spills = 0;
  for (int i = 0; i < size; ++i) {
    const StackByte b = s.type[static_cast<std::size_t>((byte_slot - i) % 8)];
    if (b == StackByte::kZero) ++zeros;
    if (b == StackByte::kSpill) ++spills;
  }
  if ((spills == size && s.spilled.is_null()) || zeros == size) {
    out = make_known_scalar(0);
  } else {
    out = make_unknown_scalar();
  }
  return 0;
}

void Checker::stack_mark_misc(FuncState& f, std::int64_t min_off, std::int64_t max_off, bool zero) {
  for (std::int64_t o = min_off; o < max_off; ++o) {
    const auto byte_slot = static_cast<std::size_t>(-o - 1);
    StackSlot& s = slot(f, byte_slot / 8);
    if (s.type[7] == StackByte::kSpill) {
      s.spilled = RegState{};
      for (StackByte& b : s.type) {
        if (b == StackByte::kSpill) b = StackByte::kMisc;
      }
    }
    StackByte& b = s.type[byte_slot % 8];
    b = zero && b == StackByte::kZero ? StackByte::kZero : StackByte::kMisc;
  }
}

int Checker::check_map_value_access(int regno, const RegState& ptr, int off, int size, bool write,
                                    bool zero_ok) {
  const MapSpec& map = map_of(ptr);
  const int total = off + ptr.off;
  if (write && (map.map_flags & BPF_F_RDONLY_PROG)) {
    return log_.reject(EACCES, "write into map forbidden, value_size=%u off=%d size=%d",
                       map.value_size, total, size);
  }
  if (!write && (map.map_flags & BPF_F_WRONLY_PROG)) {
    return log_.reject(EACCES, "read from map forbidden, value_size=%u off=%d size=%d",
                       map.value_size, total, size);
  }
  return check_mem_region_access(regno, ptr, off, size, map.value_size, zero_ok);
}

// check_mem_region_access: the fixed and variable offset of a map value or a ringbuf record
// against its size, both ends.
int Checker::check_mem_region_access(int regno, const RegState& ptr, int off, int size,
                                     std::uint32_t mem_size, bool zero_ok) {
  const int total = off + ptr.off;
  auto in_bounds = [&](std::int64_t o) {
    const bool size_ok = size > 0 || (zero_ok && size == 0);
    return o >= 0 && size_ok &&
           static_cast<std::uint64_t>(o) + static_cast<std::uint64_t>(size) <= mem_size;
  };
  auto bad = [&](std::int64_t o) {
    if (ptr.type == RegType::kPtrToMapValue) {
      return log_.reject(EACCES,
                         "invalid access to map value, value_size=%u off=%" PRId64 " size=%d",
                         mem_size, o, size);
    }
    return log_.reject(EACCES, "invalid access to memory, mem_size=%u off=%" PRId64 " size=%d",
                       mem_size, o, size);
  };
  if (ptr.smin < 0 &&
      (ptr.smin == std::numeric_limits<std::int64_t>::min() ||
       total + ptr.smin != static_cast<std::int32_t>(total + ptr.smin) || ptr.smin + total < 0)) {
    return log_.reject(
        EACCES,
        "R%d min value is negative, either use unsigned index or do a if (index >=0) check.",
        regno);
  }
  if (!in_bounds(ptr.smin + total)) {
    const int err = bad(ptr.smin + total);
    log_.add_to_reason("R%d min value is outside of the allowed memory range", regno);
    return err;
  }
  if (ptr.umax >= static_cast<std::uint64_t>(kMaxVarOff)) {
    return log_.reject(
        EACCES, "R%d unbounded memory access, make sure to bounds check any such access", regno);
  }
  if (!in_bounds(static_cast<std::int64_t>(ptr.umax) + total)) {
    const int err = bad(static_cast<std::int64_t>(ptr.umax) + total);
    log_.add_to_reason("R%d max value is outside of the allowed memory range", regno);
    return err;
  }
  return 0;
}

int Checker::check_ctx_ptr_unmodified(int regno) {
  const RegState& r = reg(regno);
  if (r.off < 0)
    return log_.reject(EACCES, "negative offset ctx ptr R%d off=%d disallowed", regno, r.off);
  if (r.off)
    return log_.reject(EACCES, "dereference of modified ctx ptr R%d off=%d disallowed", regno,
                       r.off);
  if (!r.var_off.is_const() || r.var_off.value) {
    return log_.reject(EACCES, "variable ctx access var_off=%s disallowed",
                       r.var_off.str().c_str());
  }
  return 0;
}

int Checker::check_ctx_access(int regno, int off, int size, bool write) {
  if (int err = check_ctx_ptr_unmodified(regno)) return err;
  // pe_prog_is_valid_access
  bool ok = off >= 0 && off < kPerfCtxSize && !write && off % size == 0;
  if (ok && off >= kPerfCtxPeriodOff) {
    ok = size == 8 || size == 4 || size == 2 || size == 1;
  } else if (ok) {
    ok = size == 8;
  }
  if (!ok) return log_.reject(EACCES, "invalid bpf_context access off=%d size=%d", off, size);
  return 0;
}

// check_ptr_alignment / check_generic_ptr_alignment: x86-64 has efficient unaligned access, so
// only the stack is always strict; an atomic (strict_alignment_once) is strict on every pointer.
// Byte accesses are always aligned.
int Checker::check_ptr_alignment(const RegState& ptr, int off, int size,
                                 bool strict_alignment_once) {
  const char* desc = "";
  bool strict = strict_alignment_once;
  switch (ptr.type) {
    case RegType::kPtrToStack:
      desc = "stack ";
      strict = true;
      break;
    case RegType::kPtrToMapValue:
      desc = "value ";
      break;
    case RegType::kPtrToCtx:
      desc = "context ";
      break;
    default:
      break;
  }
  if (!strict || size == 1) return 0;
  const Tnum at = tnum_add(
      ptr.var_off,
      Tnum::constant(static_cast<std::uint64_t>(static_cast<std::int64_t>(ptr.off) + off)));
  if (at.is_aligned(static_cast<std::uint64_t>(size))) return 0;
  return log_.reject(EACCES, "misaligned %saccess off %s+%d+%d size %d", desc,
                     ptr.var_off.str().c_str(), ptr.off, off, size);
}

int Checker::check_mem_access(std::uint32_t idx, int regno, int off, int size, bool write,
                              const RegState* store_value, std::int32_t imm, bool is_st,
                              RegState* load_out, bool sign_extend, bool strict_alignment_once) {
  const RegState ptr = reg(regno);
  RegState value = make_unknown_scalar();
  if (int err = check_ptr_alignment(ptr, off, size, strict_alignment_once)) return err;
  switch (ptr.type) {
    case RegType::kPtrToCtx:
      if (int err = check_ctx_access(regno, off, size, write)) return err;
      break;
    case RegType::kPtrToStack: {
      std::int64_t min_off = 0;
      std::int64_t max_off = 0;
      if (int err = check_stack_bounds(regno, ptr, off, size, write ? " write to" : " read from",
                                       min_off, max_off)) {
        return err;
      }
      FuncState& f = cur_.frames[ptr.frameno];
      if (!ptr.var_off.is_const()) {
        // check_stack_read: a read into no register (an atomic's first read) needs a constant
        // offset, so that the stack slots it reads are known (no spilled pointer leaks).
        if (!write && load_out == nullptr) {
          return log_.reject(EACCES,
                             "variable offset stack pointer cannot be passed into helper "
                             "function; var_off=%s off=%d size=%d",
                             ptr.var_off.str().c_str(), ptr.off + off, size);
        }
        if (write) {
          const bool zero = store_value ? store_value->is_null() : (is_st && imm == 0);
          stack_mark_misc(f, min_off, max_off, zero);
        }
        break;
      }
      const auto fixed = static_cast<int>(min_off);
      last_stack_spi_ = static_cast<std::int16_t>((-fixed - 1) / 8);
      last_stack_frame_ = ptr.frameno;
      if (write) {
        if (store_value && store_value->is_pointer()) {
          if (size != 8) return log_.reject(EACCES, "invalid size of register spill");
          if (ptr.frameno + 1u != cur_.frames.size() && store_value->type == RegType::kPtrToStack) {
            return log_.reject(EINVAL,
                               "cannot spill pointers to stack into stack frame of the caller");
          }
        }
        stack_write_fixed(f, fixed, size, store_value, is_st, imm);
      } else {
        if (int err = stack_read_fixed(f, fixed, size, value)) return err;
      }
      break;
    }
    case RegType::kPtrToMapValue:
      if (!ptr.maybe_null) {
        if (int err = check_map_value_access(regno, ptr, off, size, write, false)) return err;
        const MapSpec& map = map_of(ptr);
        if (!write && ptr.var_off.is_const() && map.global_data &&
            (map.map_flags & BPF_F_RDONLY_PROG)) {
          // A frozen read-only map: the load reads a known constant.
          const auto at = static_cast<std::size_t>(ptr.off + off +
                                                   static_cast<std::int64_t>(ptr.var_off.value));
          std::uint64_t v = 0;
          for (int i = 0; i < size; ++i) {
            const std::size_t b = at + static_cast<std::size_t>(i);
            const std::uint64_t byte = b < map.initial_value.size() ? map.initial_value[b] : 0;
            v |= byte << (8 * i);
          }
          value = make_known_scalar(v);
        }
        break;
      }
      [[fallthrough]];
    case RegType::kPtrToRingbufMem:
    case RegType::kPtrToMem:
      if ((ptr.type == RegType::kPtrToRingbufMem || ptr.type == RegType::kPtrToMem) &&
          !ptr.maybe_null) {
        if (int err = check_mem_region_access(regno, ptr, off, size, ptr.mem_size, false)) {
          return err;
        }
        break;
      }
      [[fallthrough]];
    case RegType::kPtrToBtfId:
      if (!ptr.maybe_null) {
        if (int err = check_ptr_to_btf_access(regno, ptr, ptr.off + off, size, write, value)) {
          return err;
        }
        break;
      }
      [[fallthrough]];
    default:
      return log_.reject(EACCES, "R%d invalid mem access '%s'", regno, reg_type_name(ptr));
  }
  if (load_out) {
    if (value.is_scalar() && size < 8) {
      if (sign_extend) {
        coerce_to_size_sx(value, size);
      } else {
        coerce_to_size(value, size);
      }
    }
    *load_out = value;
  }
  // A load or store through the ctx must see the ctx on every path (it will be rewritten).
  const PtrUse use = ptr.type == RegType::kPtrToCtx     ? PtrUse::kCtx
                     : ptr.type == RegType::kPtrToBtfId ? PtrUse::kBtf
                                                        : PtrUse::kOther;
  PtrUse& seen = ptr_use_[idx];
  if (seen == PtrUse::kUnseen) {
    seen = use;
  } else if (seen != use) {
    return log_.reject(EINVAL, "same insn cannot be used with different pointers");
  }
  return 0;
}

int Checker::do_ldx(std::uint32_t idx, const Insn& in) {
  if (int err = check_read(in.src_reg)) return err;
  if (int err = check_write(in.dst_reg)) return err;
  RegState out;
  if (int err = check_mem_access(idx, in.src_reg, in.off, insn_access_bytes(in.code), false,
                                 nullptr, 0, false, &out, insn_mode(in.code) == kModeMemsx)) {
    return err;
  }
  reg(in.dst_reg) = out;
  return 0;
}

int Checker::do_store(std::uint32_t idx, const Insn& in) {
  if (insn_class(in.code) == BPF_STX) {
    if (insn_mode(in.code) == BPF_ATOMIC) return do_atomic(idx, in);
    if (insn_mode(in.code) != BPF_MEM || in.imm != 0) {
      return log_.reject(EINVAL, "BPF_STX uses reserved fields");
    }
    if (int err = check_read(in.src_reg)) return err;
    if (int err = check_read(in.dst_reg)) return err;
    const RegState value = reg(in.src_reg);
    return check_mem_access(idx, in.dst_reg, in.off, insn_access_bytes(in.code), true, &value, 0,
                            false, nullptr, false);
  }
  if (insn_mode(in.code) != BPF_MEM || in.src_reg != 0) {
    return log_.reject(EINVAL, "BPF_ST uses reserved fields");
  }
  if (int err = check_read(in.dst_reg)) return err;
  return check_mem_access(idx, in.dst_reg, in.off, insn_access_bytes(in.code), true, nullptr,
                          in.imm, true, nullptr, false);
}

int Checker::do_atomic(std::uint32_t idx, const Insn& in) {
  const int size = insn_access_bytes(in.code);
  const int op = in.imm;
  const bool fetch_rmw = op == (BPF_ADD | BPF_FETCH) || op == (BPF_AND | BPF_FETCH) ||
                         op == (BPF_OR | BPF_FETCH) || op == (BPF_XOR | BPF_FETCH) ||
                         op == BPF_XCHG || op == BPF_CMPXCHG;
  const bool plain_rmw = op == BPF_ADD || op == BPF_AND || op == BPF_OR || op == BPF_XOR;
  constexpr int kLoadAcquire = 0x100;   // BPF_LOAD_ACQ
  constexpr int kStoreRelease = 0x110;  // BPF_STORE_REL
  if (op == kLoadAcquire || op == kStoreRelease) {
    if (op == kLoadAcquire) {
      if (int err = check_read(in.src_reg)) return err;
      if (int err = check_write(in.dst_reg)) return err;
      RegState out;
      if (int err = check_mem_access(idx, in.src_reg, in.off, size, false, nullptr, 0, false, &out,
                                     false, true)) {
        return err;
      }
      reg(in.dst_reg) = out;
      return 0;
    }
    if (int err = check_read(in.src_reg)) return err;
    if (int err = check_read(in.dst_reg)) return err;
    const RegState value = reg(in.src_reg);
    return check_mem_access(idx, in.dst_reg, in.off, size, true, &value, 0, false, nullptr, false,
                            true);
  }
  if (!fetch_rmw && !plain_rmw) {
    return log_.reject(EINVAL, "BPF_ATOMIC uses invalid atomic opcode %02x", op);
  }
  if (size != 4 && size != 8) return log_.reject(EINVAL, "invalid atomic operand size");
  if (int err = check_read(in.src_reg)) return err;
  if (int err = check_read(in.dst_reg)) return err;
  if (op == BPF_CMPXCHG) {
    if (int err = check_read(0)) return err;
  }
  const RegState ptr = reg(in.dst_reg);
  if (ptr.type == RegType::kPtrToCtx) {
    return log_.reject(EACCES, "BPF_ATOMIC stores into R%d %s is not allowed", in.dst_reg, "ctx");
  }
  // As check_atomic_rmw: a read into no register, then (a fetch) the fill of the register.
  if (int err = check_mem_access(idx, in.dst_reg, in.off, size, false, nullptr, 0, false, nullptr,
                                 false, true)) {
    return err;
  }
  RegState loaded;
  if (fetch_rmw) {
    if (int err = check_mem_access(idx, in.dst_reg, in.off, size, false, nullptr, 0, false, &loaded,
                                   false, true)) {
      return err;
    }
  }
  // A fetch from a slot holding a spilled pointer returns that pointer, as its fill would (the
  // kernel's second read is the register's fill): its type stays.
  const RegState unknown = make_unknown_scalar();
  if (int err = check_mem_access(idx, in.dst_reg, in.off, size, true, &unknown, 0, false, nullptr,
                                 false, true)) {
    return err;
  }
  if (fetch_rmw) {
    const int target = op == BPF_CMPXCHG ? 0 : in.src_reg;
    if (target == kFramePointer) return log_.reject(EACCES, "frame pointer is read only");
    if (size == 4) {
      coerce_to_size(loaded, 4);
    }
    reg(target) = loaded;
  }
  return 0;
}

int Checker::do_lddw(const Insn& in, const Insn& hi) {
  if (insn_size(in.code) != BPF_DW) return log_.reject(EINVAL, "invalid BPF_LD_IMM insn");
  if (in.off != 0) return log_.reject(EINVAL, "BPF_LD_IMM64 uses reserved fields");
  if (int err = check_write(in.dst_reg)) return err;
  RegState& d = reg(in.dst_reg);
  if (in.src_reg == 0) {
    d = make_known_scalar((static_cast<std::uint64_t>(static_cast<std::uint32_t>(hi.imm)) << 32) |
                          static_cast<std::uint32_t>(in.imm));
    return 0;
  }
  if (in.src_reg == BPF_PSEUDO_FUNC) {
    // The kernel takes a callback's prototype and linkage from BTF function info.
    if (!btf_func_info_) return log_.reject(EINVAL, "missing btf func_info");
    const auto target = static_cast<std::size_t>(&in - insns_.data() + in.imm + 1);
    if (is_global(shape_.subprog_of[target])) {
      return log_.reject(EINVAL, "callback function not static");
    }
    d = make_pointer(RegType::kPtrToFunc);
    d.subprog = static_cast<std::int16_t>(shape_.subprog_of[target]);
    return 0;
  }
  if (in.src_reg == BPF_PSEUDO_MAP_IDX) {
    d = make_pointer(RegType::kConstPtrToMap);
    d.map = static_cast<std::int16_t>(in.imm);
    return 0;
  }
  d = make_pointer(RegType::kPtrToMapValue);
  d.map = static_cast<std::int16_t>(in.imm);
  d.off = hi.imm;
  return 0;
}

}  // namespace userperf::bpf
