#include "bpf/verifier/program_shape.hpp"

#include <algorithm>
#include <array>
#include <cerrno>

#include "bpf/verifier/helper_protos.hpp"
#include "bpf/verifier/log.hpp"
#include "bpf/verifier/reg_state.hpp"
#include "support/expected.hpp"

namespace userperf::bpf {
namespace {

constexpr std::uint32_t kMaxProcessedInsns = 1000000;  // BPF_COMPLEXITY_LIMIT_INSNS

constexpr std::array<bool, 256> build_opcode_table() {
  std::array<bool, 256> t{};
  for (std::uint8_t cls : {BPF_ALU, BPF_ALU64}) {
    for (std::uint8_t op : {BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR, BPF_AND, BPF_LSH, BPF_RSH,
                            BPF_MOD, BPF_XOR, BPF_MOV, BPF_ARSH}) {
      t[cls | op | BPF_K] = true;
      t[cls | op | BPF_X] = true;
    }
    t[cls | BPF_NEG] = true;
  }
  t[BPF_ALU | BPF_END | BPF_TO_LE] = true;
  t[BPF_ALU | BPF_END | BPF_TO_BE] = true;
  t[BPF_ALU64 | BPF_END | BPF_TO_LE] = true;
  for (std::uint8_t cls : {BPF_JMP, BPF_JMP32}) {
    for (std::uint8_t op : {BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET, BPF_JNE, BPF_JSGT, BPF_JSGE,
                            BPF_JLT, BPF_JLE, BPF_JSLT, BPF_JSLE}) {
      t[cls | op | BPF_K] = true;
      t[cls | op | BPF_X] = true;
    }
    t[cls | BPF_JA] = true;
  }
  t[BPF_JMP | BPF_CALL] = true;
  t[BPF_JMP | BPF_EXIT] = true;
  for (std::uint8_t size : {BPF_B, BPF_H, BPF_W, BPF_DW}) {
    t[BPF_LDX | BPF_MEM | size] = true;
    t[BPF_STX | BPF_MEM | size] = true;
    t[BPF_ST | BPF_MEM | size] = true;
    t[BPF_STX | BPF_ATOMIC | size] = true;
    if (size != BPF_DW) t[BPF_LDX | kModeMemsx | size] = true;
    if (size != BPF_DW) {
      t[BPF_LD | BPF_ABS | size] = true;
      t[BPF_LD | BPF_IND | size] = true;
    }
  }
  t[BPF_LD | BPF_IMM | BPF_DW] = true;
  return t;
}

constexpr std::array<bool, 256> kOpcodes = build_opcode_table();

bool is_jump_class(std::uint8_t code) {
  return insn_class(code) == BPF_JMP || insn_class(code) == BPF_JMP32;
}

bool is_pseudo_call(const Insn& in) {
  return in.code == (BPF_JMP | BPF_CALL) && in.src_reg == BPF_PSEUDO_CALL;
}

// lddw of a function's address: its target starts a subprogram as a call's does.
bool is_pseudo_func(const Insn& in) {
  return is_lddw(in) && in.src_reg == BPF_PSEUDO_FUNC;
}

// The target of a jump (not a call or exit).
std::int64_t jump_target(const Insn& in, std::size_t i) {
  if (in.code == (BPF_JMP32 | BPF_JA)) return static_cast<std::int64_t>(i) + in.imm + 1;
  return static_cast<std::int64_t>(i) + in.off + 1;
}

int check_insns(std::span<const Insn> insns, const std::vector<MapSpec>* maps, VerifierLog& log) {
  for (std::size_t i = 0; i < insns.size(); ++i) {
    const Insn& in = insns[i];
    if (insn_class(in.code) == BPF_LDX &&
        ((insn_mode(in.code) != BPF_MEM && insn_mode(in.code) != kModeMemsx) || in.imm != 0)) {
      return log.reject(EINVAL, "BPF_LDX uses reserved fields");
    }
    if (is_lddw(in)) {
      if (i + 1 == insns.size() || insns[i + 1].code != 0 || insns[i + 1].dst_reg != 0 ||
          insns[i + 1].src_reg != 0 || insns[i + 1].off != 0) {
        return log.reject(EINVAL, "invalid bpf_ld_imm64 insn");
      }
      const int src = in.src_reg;
      if (src != 0 && src != BPF_PSEUDO_FUNC) {
        if (src != BPF_PSEUDO_MAP_IDX && src != BPF_PSEUDO_MAP_IDX_VALUE) {
          return log.reject(EINVAL, "unrecognized bpf_ld_imm64 insn");
        }
        if (src == BPF_PSEUDO_MAP_IDX && insns[i + 1].imm != 0) {
          return log.reject(EINVAL, "unrecognized bpf_ld_imm64 insn");
        }
        if (!maps || in.imm < 0 || static_cast<std::size_t>(in.imm) >= maps->size()) {
          return log.reject(EBADF, "fd_idx %d is not pointing to valid bpf_map", in.imm);
        }
        if (src == BPF_PSEUDO_MAP_IDX_VALUE) {
          const MapSpec& map = (*maps)[static_cast<std::size_t>(in.imm)];
          const std::uint32_t off = static_cast<std::uint32_t>(insns[i + 1].imm);
          if (off >= (1U << 29)) {
            return log.reject(EINVAL, "direct value offset of %u is not allowed", off);
          }
          if (map.type != BPF_MAP_TYPE_ARRAY) {
            return log.reject(EINVAL, "no direct value access support for this map type");
          }
          if (map.max_entries != 1) {
            // array_map_direct_value_addr: only one-entry arrays.
            return log.reject(kEnotsupp,
                              "invalid access to map value pointer, value_size=%u off=%u",
                              map.value_size, off);
          }
          if (off >= map.value_size) {
            return log.reject(EINVAL, "invalid access to map value pointer, value_size=%u off=%u",
                              map.value_size, off);
          }
        }
      }
      ++i;
      continue;
    }
    if (!kOpcodes[in.code]) return log.reject(EINVAL, "unknown opcode %02x", in.code);
  }
  return 0;
}

int find_subprogs(std::span<const Insn> insns, ProgramShape& shape, VerifierLog& log) {
  std::vector<std::uint32_t> starts{0};
  for (std::size_t i = 0; i < insns.size(); ++i) {
    if (!is_pseudo_call(insns[i]) && !is_pseudo_func(insns[i])) continue;
    const std::int64_t target = static_cast<std::int64_t>(i) + insns[i].imm + 1;
    if (target < 0 || target >= static_cast<std::int64_t>(insns.size())) {
      return log.reject(EINVAL, "call to invalid destination");
    }
    starts.push_back(static_cast<std::uint32_t>(target));
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  shape.subprogs.clear();
  for (std::size_t s = 0; s < starts.size(); ++s) {
    const std::uint32_t end =
        s + 1 < starts.size() ? starts[s + 1] : static_cast<std::uint32_t>(insns.size());
    shape.subprogs.push_back({starts[s], end});
  }
  shape.subprog_of.assign(insns.size(), 0);
  for (std::size_t s = 0; s < shape.subprogs.size(); ++s) {
    const Subprog& sp = shape.subprogs[s];
    for (std::uint32_t i = sp.start; i < sp.end; ++i) {
      shape.subprog_of[i] = static_cast<std::uint16_t>(s);
      const Insn& in = insns[i];
      if (is_jump_class(in.code) && insn_op(in.code) != BPF_CALL && insn_op(in.code) != BPF_EXIT) {
        const std::int64_t target = jump_target(in, i);
        if (target < sp.start || target >= sp.end) {
          return log.reject(EINVAL, "jump out of range from insn %u to %lld", i,
                            static_cast<long long>(target));
        }
      }
      if (i + 1 == sp.end && in.code != (BPF_JMP | BPF_EXIT) && in.code != (BPF_JMP | BPF_JA) &&
          in.code != (BPF_JMP32 | BPF_JA)) {
        return log.reject(EINVAL, "last insn is not an exit or jmp");
      }
    }
  }
  return 0;
}

// The successors of insn i inside its function (a call continues after the call).
int successors(std::span<const Insn> insns, std::size_t i, std::int64_t out[2]) {
  const Insn& in = insns[i];
  if (is_lddw(in)) {
    out[0] = static_cast<std::int64_t>(i) + 2;
    return 1;
  }
  if (!is_jump_class(in.code)) {
    out[0] = static_cast<std::int64_t>(i) + 1;
    return 1;
  }
  const std::uint8_t op = insn_op(in.code);
  if (op == BPF_EXIT) return 0;
  if (op == BPF_CALL) {
    out[0] = static_cast<std::int64_t>(i) + 1;
    return 1;
  }
  if (op == BPF_JA) {
    out[0] = jump_target(in, i);
    return 1;
  }
  out[0] = static_cast<std::int64_t>(i) + 1;
  out[1] = jump_target(in, i);
  return 2;
}

int check_cfg(std::span<const Insn> insns, ProgramShape& shape, VerifierLog& log) {
  const std::size_t n = insns.size();
  std::vector<std::uint8_t> seen(n, 0);
  std::vector<std::uint8_t> lddw_tail(n, 0);
  for (std::size_t i = 0; i + 1 < n; ++i) {
    if (is_lddw(insns[i])) lddw_tail[++i] = 1;
  }
  shape.prune_point.assign(n, 0);
  std::vector<std::size_t> work{0};
  seen[0] = 1;
  auto visit = [&](std::size_t from, std::int64_t to) -> int {
    if (to < 0 || to >= static_cast<std::int64_t>(n)) {
      return log.reject(EINVAL, "jump out of range from insn %zu to %lld", from,
                        static_cast<long long>(to));
    }
    const auto t = static_cast<std::size_t>(to);
    if (lddw_tail[t]) return log.reject(EINVAL, "jump into the middle of ldimm64 insn %zu", t);
    if (!seen[t]) {
      seen[t] = 1;
      work.push_back(t);
    }
    return 0;
  };
  while (!work.empty()) {
    const std::size_t i = work.back();
    work.pop_back();
    const Insn& in = insns[i];
    std::int64_t next[2];
    const int count = successors(insns, i, next);
    for (int k = 0; k < count; ++k) {
      if (int err = visit(i, next[k])) return err;
    }
    if (is_pseudo_func(in)) {  // the callback is reachable from here
      if (int err = visit(i, static_cast<std::int64_t>(i) + in.imm + 1)) return err;
    }
    if (is_jump_class(in.code)) {
      const std::uint8_t op = insn_op(in.code);
      if (op == BPF_CALL) {
        shape.prune_point[i + 1] = 1;
        // A callback-calling helper is visited again after each run of its callback: states
        // are kept and compared there to find when the iterations converge.
        if (calls_callback(in)) shape.prune_point[i] = 1;
        if (is_pseudo_call(in)) {
          shape.prune_point[i] = 1;
          if (int err = visit(i, static_cast<std::int64_t>(i) + in.imm + 1)) return err;
        }
      } else if (op == BPF_JA) {
        shape.prune_point[static_cast<std::size_t>(next[0])] = 1;
      } else if (op != BPF_EXIT) {
        shape.prune_point[i] = 1;
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!seen[i] && !lddw_tail[i]) return log.reject(EINVAL, "unreachable insn %zu", i);
  }
  return 0;
}

struct UseDef {
  std::uint16_t use = 0;
  std::uint16_t def = 0;
};

UseDef use_def(const Insn& in) {
  UseDef ud;
  const std::uint8_t cls = insn_class(in.code);
  const std::uint8_t op = insn_op(in.code);
  switch (cls) {
    case BPF_ALU:
    case BPF_ALU64:
      if (op != BPF_MOV) ud.use |= reg_bit(in.dst_reg);
      if (insn_source(in.code) == BPF_X && op != BPF_NEG && op != BPF_END)
        ud.use |= reg_bit(in.src_reg);
      ud.def = reg_bit(in.dst_reg);
      break;
    case BPF_LDX:
      ud.use = reg_bit(in.src_reg);
      ud.def = reg_bit(in.dst_reg);
      break;
    case BPF_ST:
      ud.use = reg_bit(in.dst_reg);
      break;
    case BPF_STX:
      ud.use = reg_bit(in.dst_reg) | reg_bit(in.src_reg);
      if (insn_mode(in.code) == BPF_ATOMIC) {
        if (in.imm == BPF_CMPXCHG) {
          ud.use |= reg_bit(0);
          ud.def = reg_bit(0);
        } else if (in.imm & BPF_FETCH) {
          ud.def = reg_bit(in.src_reg);
        }
      }
      break;
    case BPF_LD:
      if (is_lddw(in)) {
        ud.def = reg_bit(in.dst_reg);
      } else {  // LD_ABS/IND: rejected for this program type; reads ctx in r6
        ud.use = reg_bit(6) | reg_bit(in.src_reg);
        ud.def = 0x3f;
      }
      break;
    default:  // jumps
      if (op == BPF_EXIT) {
        ud.use = reg_bit(0);
      } else if (op == BPF_CALL) {
        const int args = in.src_reg == BPF_PSEUDO_CALL ? 5 : helper_arg_count(in.imm);
        for (int r = 1; r <= args; ++r) ud.use |= reg_bit(r);
        ud.def = 0x3f;
      } else if (op != BPF_JA) {
        ud.use = reg_bit(in.dst_reg);
        if (insn_source(in.code) == BPF_X) ud.use |= reg_bit(in.src_reg);
      }
      break;
  }
  return ud;
}

void compute_liveness(std::span<const Insn> insns, ProgramShape& shape) {
  const std::size_t n = insns.size();
  std::vector<UseDef> ud(n);
  for (std::size_t i = 0; i < n; ++i) ud[i] = use_def(insns[i]);
  shape.live_in.assign(n, 0);
  bool changed = true;
  while (changed) {
    changed = false;
    for (std::size_t k = n; k-- > 0;) {
      std::int64_t next[2];
      const int count = successors(insns, k, next);
      std::uint16_t out = 0;
      for (int s = 0; s < count; ++s) {
        if (next[s] >= 0 && next[s] < static_cast<std::int64_t>(n)) {
          out |= shape.live_in[static_cast<std::size_t>(next[s])];
        }
      }
      const auto in = static_cast<std::uint16_t>(ud[k].use | (out & ~ud[k].def) | reg_bit(10));
      if (in != shape.live_in[k]) {
        shape.live_in[k] = in;
        changed = true;
      }
    }
  }
}

}  // namespace

bool opcode_known(std::uint8_t code) {
  return kOpcodes[code];
}

int helper_arg_count(std::int32_t helper_id) {
  const HelperProto* proto = perf_event_helper_proto(helper_id);
  if (!proto) return 5;
  int count = 0;
  while (count < 5 && proto->args[count] != ArgType::kNone) ++count;
  return count;
}

int check_program_shape(std::span<const Insn> insns, const std::vector<MapSpec>* maps,
                        ProgramShape& shape, VerifierLog& log) {
  if (insns.empty() || insns.size() > kMaxProcessedInsns) {
    return log.reject(E2BIG, "program has %zu insns", insns.size());
  }
  if (int err = check_insns(insns, maps, log)) return err;
  if (int err = find_subprogs(insns, shape, log)) return err;
  if (int err = check_cfg(insns, shape, log)) return err;
  compute_liveness(insns, shape);
  return 0;
}

}  // namespace userperf::bpf
