#include "bpf/verifier/log.hpp"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdarg>

#include "bpf/isa/helper_names.hpp"

namespace userperf::bpf {
namespace {

const char* size_name(std::uint8_t code, bool sign) {
  switch (insn_size(code)) {
    case BPF_B:
      return sign ? "s8" : "u8";
    case BPF_H:
      return sign ? "s16" : "u16";
    case BPF_W:
      return sign ? "s32" : "u32";
    default:
      return "u64";
  }
}

const char* alu_op_name(std::uint8_t op) {
  switch (op) {
    case BPF_ADD:
      return "+=";
    case BPF_SUB:
      return "-=";
    case BPF_MUL:
      return "*=";
    case BPF_DIV:
      return "/=";
    case BPF_OR:
      return "|=";
    case BPF_AND:
      return "&=";
    case BPF_LSH:
      return "<<=";
    case BPF_RSH:
      return ">>=";
    case BPF_MOD:
      return "%=";
    case BPF_XOR:
      return "^=";
    case BPF_MOV:
      return "=";
    case BPF_ARSH:
      return "s>>=";
    default:
      return "?=";
  }
}

const char* jmp_op_name(std::uint8_t op) {
  switch (op) {
    case BPF_JEQ:
      return "==";
    case BPF_JGT:
      return ">";
    case BPF_JGE:
      return ">=";
    case BPF_JSET:
      return "&";
    case BPF_JNE:
      return "!=";
    case BPF_JSGT:
      return "s>";
    case BPF_JSGE:
      return "s>=";
    case BPF_JLT:
      return "<";
    case BPF_JLE:
      return "<=";
    case BPF_JSLT:
      return "s<";
    case BPF_JSLE:
      return "s<=";
    default:
      return "?";
  }
}

std::string disasm_alu(const Insn& in) {
  const bool is64 = insn_class(in.code) == BPF_ALU64;
  const char r = is64 ? 'r' : 'w';
  const std::uint8_t op = insn_op(in.code);
  const int d = in.dst_reg;
  const int s = in.src_reg;
  if (op == BPF_NEG) return format_text("%c%d = -%c%d", r, d, r, d);
  if (op == BPF_END) {
    const char* kind = is64 ? "bswap" : (insn_source(in.code) == BPF_TO_BE ? "be" : "le");
    return format_text("r%d = %s%d r%d", d, kind, in.imm, d);
  }
  const bool x = insn_source(in.code) == BPF_X;
  if (op == BPF_MOV && in.off != 0 && x) return format_text("%c%d = (s%d)%c%d", r, d, in.off, r, s);
  const char* name = alu_op_name(op);
  if (in.off == 1 && op == BPF_DIV) name = "s/=";
  if (in.off == 1 && op == BPF_MOD) name = "s%=";
  if (x) return format_text("%c%d %s %c%d", r, d, name, r, s);
  return format_text("%c%d %s %d", r, d, name, in.imm);
}

std::string disasm_atomic(const Insn& in) {
  const bool dw = insn_size(in.code) == BPF_DW;
  const char* sz = size_name(in.code, false);
  const int d = in.dst_reg;
  const int s = in.src_reg;
  const int op = in.imm & ~BPF_FETCH;
  const char* names[] = {"add", "or", "and", "xor"};
  int which = -1;
  if (op == BPF_ADD) which = 0;
  if (op == BPF_OR) which = 1;
  if (op == BPF_AND) which = 2;
  if (op == BPF_XOR) which = 3;
  if (which >= 0 && !(in.imm & BPF_FETCH)) {
    const char* sym[] = {"+=", "|=", "&=", "^="};
    return format_text("lock *(%s *)(r%d %+d) %s r%d", sz, d, in.off, sym[which], s);
  }
  if (which >= 0) {
    return format_text("r%d = atomic%s_fetch_%s((%s *)(r%d %+d), r%d)", s, dw ? "64" : "",
                       names[which], sz, d, in.off, s);
  }
  if (in.imm == BPF_XCHG) {
    return format_text("r%d = atomic%s_xchg((%s *)(r%d %+d), r%d)", s, dw ? "64" : "", sz, d,
                       in.off, s);
  }
  if (in.imm == BPF_CMPXCHG) {
    return format_text("r0 = atomic%s_cmpxchg((%s *)(r%d %+d), r0, r%d)", dw ? "64" : "", sz, d,
                       in.off, s);
  }
  return format_text("(atomic %#x) *(%s *)(r%d %+d), r%d", in.imm, sz, d, in.off, s);
}

}  // namespace

const char* helper_label(std::int32_t id) {
  const char* name = helper_name(id);
  return name ? name : "unknown";
}

namespace {
std::string vformat_text(const char* f, std::va_list args) {
  char buf[256];
  std::vsnprintf(buf, sizeof buf, f, args);
  return buf;
}
}  // namespace

std::string format_text(const char* f, ...) {
  std::va_list args;
  va_start(args, f);
  std::string text = vformat_text(f, args);
  va_end(args);
  return text;
}

void VerifierLog::note(const char* f, ...) {
  if (level_ < 1 || trace_.size() >= kTraceLimit) return;
  std::va_list args;
  va_start(args, f);
  trace_ += vformat_text(f, args) + "\n";
  va_end(args);
}

int VerifierLog::reject(int err, const char* f, ...) {
  std::va_list args;
  va_start(args, f);
  reason_ = vformat_text(f, args);
  va_end(args);
  return err;
}

void VerifierLog::add_to_reason(const char* f, ...) {
  std::va_list args;
  va_start(args, f);
  reason_ += "\n" + vformat_text(f, args);
  va_end(args);
}

std::string disasm_insn(std::span<const Insn> insns, std::size_t idx) {
  const Insn& in = insns[idx];
  const std::uint8_t cls = insn_class(in.code);
  const int d = in.dst_reg;
  const int s = in.src_reg;
  switch (cls) {
    case BPF_ALU:
    case BPF_ALU64:
      return disasm_alu(in);
    case BPF_LDX:
      return format_text("r%d = *(%s *)(r%d %+d)", d,
                         size_name(in.code, insn_mode(in.code) == kModeMemsx), s, in.off);
    case BPF_STX:
      if (insn_mode(in.code) == BPF_ATOMIC) return disasm_atomic(in);
      return format_text("*(%s *)(r%d %+d) = r%d", size_name(in.code, false), d, in.off, s);
    case BPF_ST:
      return format_text("*(%s *)(r%d %+d) = %d", size_name(in.code, false), d, in.off, in.imm);
    case BPF_LD: {
      if (!is_lddw(in)) return format_text("(ld mode %#x)", insn_mode(in.code));
      const std::uint32_t hi =
          idx + 1 < insns.size() ? static_cast<std::uint32_t>(insns[idx + 1].imm) : 0;
      if (s == BPF_PSEUDO_MAP_IDX || s == BPF_PSEUDO_MAP_FD)
        return format_text("r%d = map[idx:%d]", d, in.imm);
      if (s == BPF_PSEUDO_MAP_IDX_VALUE || s == BPF_PSEUDO_MAP_VALUE) {
        return format_text("r%d = map[idx:%d][0]+%u", d, in.imm, hi);
      }
      const std::uint64_t v =
          (static_cast<std::uint64_t>(hi) << 32) | static_cast<std::uint32_t>(in.imm);
      return format_text("r%d = 0x%" PRIx64, d, v);
    }
    default: {  // JMP, JMP32
      const std::uint8_t op = insn_op(in.code);
      const char r = cls == BPF_JMP32 ? 'w' : 'r';
      if (op == BPF_EXIT) return "exit";
      if (op == BPF_CALL) {
        if (s == BPF_PSEUDO_CALL) return format_text("call pc%+d", in.imm);
        return format_text("call %s#%d", helper_label(in.imm), in.imm);
      }
      if (op == BPF_JA) {
        if (cls == BPF_JMP32) return format_text("gotol pc%+d", in.imm);
        return format_text("goto pc%+d", in.off);
      }
      if (insn_source(in.code) == BPF_X) {
        return format_text("if %c%d %s %c%d goto pc%+d", r, d, jmp_op_name(op), r, s, in.off);
      }
      return format_text("if %c%d %s %#x goto pc%+d", r, d, jmp_op_name(op), in.imm, in.off);
    }
  }
}

// reg_type_str's PTR_TO_BTF_ID: the flags' prefixes in the kernel's order, "ptr_", then
// "or_null_" (the struct's name follows in a state dump).
const char* btf_ptr_type_name(std::uint8_t flags, bool maybe_null) {
  static const std::array<std::string, 64> names = [] {
    std::array<std::string, 64> out;
    for (unsigned i = 0; i < out.size(); ++i) {
      const unsigned f = i >> 1;
      std::string name;
      if (f & kBtfUser) name += "user_";
      if (f & kBtfPercpu) name += "percpu_";
      if (f & kBtfRcu) name += "rcu_";
      if (f & kBtfUntrusted) name += "untrusted_";
      if (f & kBtfTrusted) name += "trusted_";
      name += "ptr_";
      if (i & 1) name += "or_null_";
      out[i] = name;
    }
    return out;
  }();
  return names[((flags & 31u) << 1) | (maybe_null ? 1u : 0u)].c_str();
}

const char* reg_type_name(const RegState& reg) {
  switch (reg.type) {
    case RegType::kNotInit:
      return "?";
    case RegType::kScalar:
      return "scalar";
    case RegType::kPtrToCtx:
      return "ctx";
    case RegType::kConstPtrToMap:
      return "map_ptr";
    case RegType::kPtrToMapValue:
      return reg.maybe_null ? "map_value_or_null" : "map_value";
    case RegType::kPtrToStack:
      return "fp";
    case RegType::kPtrToRingbufMem:
      return reg.maybe_null ? "ringbuf_mem_or_null" : "ringbuf_mem";
    case RegType::kPtrToMem:
      return reg.maybe_null ? "mem_or_null" : "mem";
    case RegType::kPtrToFunc:
      return "func";
    case RegType::kPtrToBtfId:
      return btf_ptr_type_name(reg.btf_flags, reg.maybe_null);
  }
  return "?";
}

std::string format_reg(const RegState& reg, const std::vector<MapSpec>* maps) {
  if (reg.type == RegType::kScalar) {
    if (reg.var_off.is_const())
      return format_text("%" PRId64, static_cast<std::int64_t>(reg.var_off.value));
    std::string out = "scalar(";
    std::string sep;
    auto add = [&](const std::string& part) {
      out += sep + part;
      sep = ",";
    };
    if (reg.id) add(format_text("id=%u", reg.id));
    if (reg.smin != std::numeric_limits<std::int64_t>::min())
      add(format_text("smin=%" PRId64, reg.smin));
    if (reg.smax != std::numeric_limits<std::int64_t>::max())
      add(format_text("smax=%" PRId64, reg.smax));
    if (reg.umin != 0) add(format_text("umin=%" PRIu64, reg.umin));
    if (reg.umax != ~0ULL) add(format_text("umax=%" PRIu64, reg.umax));
    if (reg.s32_min != std::numeric_limits<std::int32_t>::min())
      add(format_text("smin32=%d", reg.s32_min));
    if (reg.s32_max != std::numeric_limits<std::int32_t>::max())
      add(format_text("smax32=%d", reg.s32_max));
    if (reg.u32_min != 0) add(format_text("umin32=%u", reg.u32_min));
    if (reg.u32_max != 0xffffffffU) add(format_text("umax32=%u", reg.u32_max));
    if (!reg.var_off.is_unknown()) add("var_off=" + reg.var_off.str());
    return out + ")";
  }
  if (reg.type == RegType::kPtrToStack) {
    std::string out = format_text("fp%d", reg.off);
    if (!reg.var_off.is_const()) out += "(var_off=" + reg.var_off.str() + ")";
    return out;
  }
  std::string out = std::string(reg_type_name(reg)) + "(";
  std::string sep;
  if (reg.id) {
    out += format_text("id=%u", reg.id);
    sep = ",";
  }
  if (reg.map >= 0 && maps && static_cast<std::size_t>(reg.map) < maps->size()) {
    const MapSpec& m = (*maps)[static_cast<std::size_t>(reg.map)];
    out += sep + format_text("map=%s,ks=%u,vs=%u", m.name.c_str(), m.key_size, m.value_size);
    sep = ",";
  }
  if (reg.ref_obj_id) {
    out += sep + format_text("ref_obj_id=%u", reg.ref_obj_id);
    sep = ",";
  }
  if (reg.off) {
    out += sep + format_text("off=%d", reg.off);
    sep = ",";
  }
  if (reg.type == RegType::kPtrToRingbufMem || reg.type == RegType::kPtrToMem) {
    out += sep + format_text("sz=%u", reg.mem_size);
    sep = ",";
  }
  if (!reg.var_off.is_const()) {
    out += sep + format_text("smin=%" PRId64 ",smax=%" PRId64 ",var_off=", reg.smin, reg.smax) +
           reg.var_off.str();
  }
  return out + ")";
}

std::string format_state(const VerifierState& state, const std::vector<MapSpec>* maps) {
  std::string out;
  for (std::size_t f = 0; f < state.frames.size(); ++f) {
    const FuncState& frame = state.frames[f];
    if (state.frames.size() > 1) out += format_text("frame%zu: ", f);
    for (int r = 0; r < kNumRegs; ++r) {
      if (frame.regs[r].type == RegType::kNotInit) continue;
      out += format_text("R%d=", r) + format_reg(frame.regs[r], maps) + " ";
    }
    for (std::size_t spi = 0; spi < frame.stack.size(); ++spi) {
      const StackSlot& slot = frame.stack[spi];
      bool any = false;
      for (StackByte b : slot.type) any |= b != StackByte::kInvalid;
      if (!any) continue;
      out += format_text("fp%d=", -static_cast<int>((spi + 1) * 8));
      if (slot.type[7] == StackByte::kSpill) {
        out += format_reg(slot.spilled, maps);
      } else {
        for (int i = 7; i >= 0; --i) {
          const char c[] = {'?', 'm', '0', 'r'};
          out += c[static_cast<int>(slot.type[static_cast<std::size_t>(i)])];
        }
      }
      out += " ";
    }
  }
  if (!out.empty()) out.pop_back();
  return out;
}

// ---------------------------------------------------------------- VerifierLog

void VerifierLog::pruned(std::uint32_t idx) {
  if (level_ >= 2 && trace_.size() < kTraceLimit) trace_ += format_text("%u: safe\n", idx);
}

void VerifierLog::path_start(std::uint32_t from, std::uint32_t to, const VerifierState& state) {
  if (level_ < 1) return;
  path_from_ = from;
  path_to_ = to;
  path_forked_ = true;
  path_insns_.clear();
  if (level_ == 1) path_start_ = state;
  if (level_ >= 2 && trace_.size() < kTraceLimit) {
    trace_ += format_text("\nfrom %u to %u: ", from, to) + format_state(state, maps_) + "\n";
  }
}

void VerifierLog::trace_insn(std::uint32_t idx, const VerifierState& state) {
  if (trace_.size() >= kTraceLimit) return;
  trace_ += format_text("%u: ", idx) + format_state(state, maps_) + "\n";
  trace_ += insn_line(idx);
}

void VerifierLog::keep_path_insn(std::uint32_t idx) {
  if (path_insns_.size() >= kPathLimit) {
    path_insns_.erase(path_insns_.begin(), path_insns_.begin() + kPathLimit / 2);
  }
  path_insns_.push_back(idx);
}

std::string VerifierLog::insn_line(std::uint32_t idx) const {
  return format_text("%u: (%02x) ", idx, insns_[idx].code) + disasm_insn(insns_, idx) + "\n";
}

void VerifierLog::add_state_to_reason(const char* label, const VerifierState& state) {
  reason_ += "\n" + std::string(label) + format_state(state, maps_);
}

std::string VerifierLog::finish(int err, const VerifierState& last,
                                const WalkCounts& counts) const {
  std::string out;
  if (err && level_ >= 1) {
    out += trace_;
    if (level_ == 1 && counts.processed > 0) {
      if (path_forked_)
        out += format_text("from %u to %u: ", path_from_, path_to_);
      else
        out += format_text("%u: ", walk_entry_);
      out += format_state(path_start_, maps_) + "\n";
      for (std::uint32_t i : path_insns_) out += insn_line(i);
      if (!last.frames.empty())
        out += format_text("%u: ", stopped_at_) + format_state(last, maps_) + "\n";
    }
  } else if (level_ >= 2) {
    out += trace_;
  }
  if (err) out += reason_ + "\n";
  if (level_ >= 1 || !err) {
    out += format_text("processed %" PRIu64 " insns (limit %" PRIu64
                       ") total_states %u peak_states %u\n",
                       std::min(counts.processed, counts.limit + 1), counts.limit,
                       counts.total_states, counts.peak_states);
  }
  return out;
}

}  // namespace userperf::bpf
