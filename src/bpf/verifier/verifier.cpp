// The path walk (the kernel's do_check): one abstract state per path, forks at conditional jumps,
// checks at every instruction, state pruning at the kernel's prune points.
#include "bpf/verifier/verifier.hpp"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <memory>
#include <utility>

#include "bpf/verifier/ctx_rewrite.hpp"
#include "bpf/verifier/helper_protos.hpp"
#include "bpf/verifier/log.hpp"
#include "bpf/verifier/precision.hpp"
#include "bpf/verifier/program_shape.hpp"
#include "bpf/verifier/verifier_state.hpp"

namespace userperf::bpf {
namespace {

constexpr std::uint64_t kInsnLimit = 1000000;   // BPF_COMPLEXITY_LIMIT_INSNS
constexpr std::size_t kJmpSeqLimit = 8192;      // BPF_COMPLEXITY_LIMIT_JMP_SEQ
constexpr int kHelperIdLimit = 212;             // __BPF_FUNC_MAX_ID of Linux 6.18
constexpr std::uint32_t kStackRound = 16;       // round_up_stack_depth() with the JIT
constexpr std::uint32_t kPrivateStackMin = 64;  // BPF_PRIV_STACK_MIN_SIZE
constexpr std::int64_t kMaxErrno = 4095;
constexpr int kENOTSUPP = 524;  // the kernel-internal ENOTSUPP that BPF_PROG_LOAD passes on

int access_bytes(std::uint8_t code) {
  switch (insn_size(code)) {
    case BPF_B:
      return 1;
    case BPF_H:
      return 2;
    case BPF_W:
      return 4;
    default:
      return 8;
  }
}

const char* alu_name(std::uint8_t op) {
  static const char* const names[] = {
      "+=", "-=", "*=", "/=", "|=", "&=", "<<=", ">>=", "neg", "%=", "^=", "=", "s>>=", "endian"};
  return names[(op >> 4) & 0xf];
}

std::uint16_t bit(int reg) {
  return static_cast<std::uint16_t>(1U << reg);
}

enum class PtrUse : std::uint8_t { kUnseen, kCtx, kOther };

struct PendingPath {
  VerifierState state;
  Checkpoint* parent = nullptr;
  std::uint32_t insn_idx = 0;
  std::uint32_t from_idx = 0;
  std::int32_t history = -1;
};

// Pairs of ids seen in an old and a current state: the relation must be one-to-one.
class IdMap {
 public:
  // Pointer ids: both set or both zero, and consistently paired.
  bool check(std::uint32_t old_id, std::uint32_t cur_id) {
    if ((old_id == 0) != (cur_id == 0)) return false;
    if (old_id == 0) return true;
    return pair(old_id, cur_id);
  }
  // Scalar ids: an unlinked scalar counts as linked to nothing else.
  bool check_scalar(std::uint32_t old_id, std::uint32_t cur_id) {
    if (old_id == 0) return true;
    return pair(old_id, cur_id ? cur_id : ++fresh_);
  }

 private:
  bool pair(std::uint32_t old_id, std::uint32_t cur_id) {
    for (const auto& [o, c] : pairs_) {
      if (o == old_id) return c == cur_id;
      if (c == cur_id) return false;
    }
    pairs_.emplace_back(old_id, cur_id);
    return true;
  }

  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs_;
  std::uint32_t fresh_ = 1U << 31;
};

bool range_within(const RegState& o, const RegState& c) {
  return o.umin <= c.umin && o.umax >= c.umax && o.smin <= c.smin && o.smax >= c.smax &&
         o.u32_min <= c.u32_min && o.u32_max >= c.u32_max && o.s32_min <= c.s32_min &&
         o.s32_max >= c.s32_max;
}

bool regs_exact(const RegState& o, const RegState& c, IdMap& ids) {
  RegState a = o;
  RegState b = c;
  a.id = b.id = 0;
  a.precise = b.precise = false;
  return a == b && ids.check(o.id, c.id);
}

// regsafe(): every behaviour `cur` allows, `old` allowed and was verified safe.
bool reg_safe(const RegState& o, const RegState& c, IdMap& ids, bool exact) {
  if (exact) return regs_exact(o, c, ids);
  if (o.type == RegType::kNotInit) return true;
  if (o.type != c.type || o.maybe_null != c.maybe_null) return false;
  switch (o.type) {
    case RegType::kScalar:
      if (!o.precise) return true;  // its value decided nothing on the old paths
      if (regs_exact(o, c, ids)) return true;
      if (!ids.check_scalar(o.id, c.id)) return false;
      return range_within(o, c) && o.var_off.contains(c.var_off);
    case RegType::kPtrToMapValue:
      return o.off == c.off && o.map == c.map && range_within(o, c) &&
             o.var_off.contains(c.var_off) && ids.check(o.id, c.id);
    default:
      return regs_exact(o, c, ids);
  }
}

bool is_spilled_scalar64(const StackSlot& s) {
  for (StackByte b : s.type) {
    if (b != StackByte::kSpill) return false;
  }
  return s.spilled.type == RegType::kScalar;
}

bool is_all_misc(const StackSlot& s) {
  for (StackByte b : s.type) {
    if (b != StackByte::kMisc && b != StackByte::kInvalid) return false;
  }
  return true;
}

// A scalar view of a slot: its 64-bit scalar spill, or an unknown scalar for all-misc bytes.
const RegState* scalar_for_slot(const StackSlot& s, const RegState& unknown) {
  if (is_spilled_scalar64(s)) return &s.spilled;
  if (is_all_misc(s)) return &unknown;
  return nullptr;
}

bool stack_safe(const FuncState& o, const FuncState& c, IdMap& ids, bool exact) {
  static const RegState unknown = make_unknown_scalar();
  const std::size_t old_bytes = o.stack.size() * 8;
  for (std::size_t i = 0; i < old_bytes; ++i) {
    const std::size_t spi = i / 8;
    const StackByte ob = o.stack[spi].type[i % 8];
    const bool cur_has = spi < c.stack.size();
    const StackByte cb = cur_has ? c.stack[spi].type[i % 8] : StackByte::kInvalid;
    if (exact) {
      if (ob != cb) return false;
      if (i % 8 == 7 && ob == StackByte::kSpill &&
          !regs_exact(o.stack[spi].spilled, c.stack[spi].spilled, ids)) {
        return false;
      }
      continue;
    }
    if (ob == StackByte::kInvalid || ob == StackByte::kMisc) continue;  // privileged: uninit ok
    if (!cur_has) return false;
    const RegState* os = scalar_for_slot(o.stack[spi], unknown);
    const RegState* cs = scalar_for_slot(c.stack[spi], unknown);
    if (os && cs) {
      if (!reg_safe(*os, *cs, ids, false)) return false;
      i += 7 - (i % 8);
      continue;
    }
    if (ob != cb) return false;
    if (i % 8 == 7 && ob == StackByte::kSpill &&
        !reg_safe(o.stack[spi].spilled, c.stack[spi].spilled, ids, false)) {
      return false;
    }
  }
  if (exact) {
    for (std::size_t spi = o.stack.size(); spi < c.stack.size(); ++spi) {
      for (StackByte b : c.stack[spi].type) {
        if (b != StackByte::kInvalid) return false;
      }
    }
  }
  return true;
}

class Checker {
 public:
  Checker(std::span<const Insn> insns, const VerifyOptions& options, VerifyResult& result)
      : insns_(insns),
        options_(options),
        result_(result),
        log_(insns, options.maps, options.log_level) {}

  // Verifies; the result gets the verdict's details and the log.
  int run() {
    const int err = run_checks();
    // The log is built after the walk so that it describes the state where it stopped.
    result_.log = log_.finish(err, cur_, {processed_, kInsnLimit, total_states_, peak_states_});
    result_.processed_insns = processed_;
    result_.peak_states = peak_states_;
    return err;
  }

 private:
  int run_checks();

  // ---- the walk
  int walk();
  int step(std::uint32_t idx);
  int is_state_visited(std::uint32_t idx, bool& pruned);
  bool states_equal(const VerifierState& o, const VerifierState& c, std::uint32_t idx, bool exact);
  void end_path();
  int push_branch(std::uint32_t target, std::uint32_t from);

  // ---- registers
  FuncState& frame() { return cur_.cur(); }
  RegState& reg(int r) { return cur_.cur().regs[static_cast<std::size_t>(r)]; }
  int check_read(int r);
  int check_write(int r);
  const MapSpec& map_of(const RegState& r) const {
    return (*options_.maps)[static_cast<std::size_t>(r.map)];
  }

  // ---- instruction classes
  int do_alu(const Insn& in);
  int do_alu_mov(const Insn& in);
  int adjust_ptr(const Insn& in, const RegState& ptr, const RegState& off, RegState& dst,
                 bool dst_is_off);
  bool sane_offset(const RegState& r, const RegState& ptr_type_of, int& err);
  int do_ldx(std::uint32_t idx, const Insn& in);
  int do_store(std::uint32_t idx, const Insn& in);
  int do_atomic(std::uint32_t idx, const Insn& in);
  int do_lddw(const Insn& in, const Insn& hi);
  int do_cond_jmp(std::uint32_t idx, const Insn& in, std::uint32_t& next);
  int do_call(std::uint32_t idx, const Insn& in, std::uint32_t& next);
  int do_local_call(std::uint32_t idx, const Insn& in, std::uint32_t& next);
  int do_exit(std::uint32_t& next, bool& path_end);

  // ---- memory
  // value: the loaded value out (reads) or stored in (writes); nullptr for a store of `imm`.
  // strict_alignment_once: an atomic's access, aligned to its size whatever the pointer.
  int check_mem_access(std::uint32_t idx, int regno, int off, int size, bool write,
                       const RegState* store_value, std::int32_t imm, bool is_st,
                       RegState* load_out, bool sign_extend, bool strict_alignment_once = false);
  int check_ptr_alignment(const RegState& ptr, int off, int size, bool strict_alignment_once);
  int check_ctx_access(int regno, int off, int size, bool write);
  int check_stack_bounds(int regno, const RegState& ptr, int off, int size, const char* what,
                         std::int64_t& min_off, std::int64_t& max_off);
  void note_stack_depth(const RegState& ptr, std::int64_t min_off);
  int check_map_value_access(int regno, const RegState& ptr, int off, int size, bool write,
                             bool zero_ok);
  StackSlot& slot(FuncState& f, std::size_t spi);
  void stack_write_fixed(FuncState& f, int off, int size, const RegState* value, bool is_st,
                         std::int32_t imm);
  int stack_read_fixed(FuncState& f, int off, int size, RegState& out);
  void stack_mark_misc(FuncState& f, std::int64_t min_off, std::int64_t max_off, bool zero);

  // ---- helpers
  struct CallMeta {
    int map = -1;
    std::int64_t const_map_key = -1;
    int mem_regno = -1;
    bool mem_write = false;
    std::uint64_t msize_max = 0;
    int raw_regno = -1;
    std::uint64_t raw_size = 0;
  };
  int check_helper_arg(int regno, ArgType type, CallMeta& meta, ArgType prev);
  int check_helper_mem(int regno, std::uint64_t size, bool write, bool zero_ok, CallMeta& meta);
  int check_map_compat(int map_index, std::int32_t helper);
  int check_get_func_ip(std::int32_t id);
  std::int64_t const_map_key(const RegState& key, std::uint32_t key_size);

  void mark_null_checked(std::uint32_t id, bool is_null);
  void sync_linked(std::uint32_t id, const RegState& known);

  int check_max_stack_depth();

  // ---- precision
  void need_precise_reg(int r);
  void need_precise_slot(std::uint8_t frame, std::size_t spi);
  void propagate_precision(const VerifierState& old, std::uint32_t idx);

  std::span<const Insn> insns_;
  const VerifyOptions& options_;
  VerifyResult& result_;
  VerifierLog log_;
  ProgramShape shape_;

  VerifierState cur_;
  Checkpoint* cur_parent_ = nullptr;
  std::vector<PendingPath> pending_;
  std::vector<std::vector<std::unique_ptr<Checkpoint>>> checkpoints_;
  std::vector<PtrUse> ptr_use_;
  std::vector<std::uint32_t> subprog_depth_;
  std::uint64_t processed_ = 0;
  std::uint64_t jmps_processed_ = 0;
  std::uint64_t prev_jmps_ = 0;
  std::uint64_t prev_insns_ = 0;
  std::uint32_t id_gen_ = 0;
  std::uint32_t total_states_ = 0;
  std::uint32_t live_states_ = 0;
  std::uint32_t peak_states_ = 0;
  std::vector<std::unique_ptr<Checkpoint>> evicted_;
  std::vector<HistoryEntry> history_;
  std::int32_t history_tail_ = -1;
  std::int16_t last_stack_spi_ = -1;  // the fixed-offset stack slot the current insn accessed
  std::uint8_t last_stack_frame_ = 0;
};

// ---------------------------------------------------------------- the walk

int Checker::run_checks() {
  if (options_.prog_type != BPF_PROG_TYPE_PERF_EVENT) {
    return log_.reject(EINVAL, "prog_type %u is not verified here (only BPF_PROG_TYPE_PERF_EVENT)",
                       options_.prog_type);
  }
  std::string shape_log;
  if (int err = check_program_shape(insns_, options_.maps, shape_, shape_log)) {
    return log_.reject_verbatim(err,
                                shape_log.empty() ? "" : shape_log.substr(0, shape_log.size() - 1));
  }
  checkpoints_.resize(insns_.size());
  ptr_use_.assign(insns_.size(), PtrUse::kUnseen);
  subprog_depth_.assign(shape_.subprogs.size(), 0);

  FuncState main;
  main.regs[1] = make_pointer(RegType::kPtrToCtx);
  main.regs[kFramePointer] = make_pointer(RegType::kPtrToStack);
  cur_.frames.push_back(std::move(main));
  log_.walk_start(cur_);

  if (int err = walk()) return err;
  if (int err = check_max_stack_depth()) return err;

  std::vector<std::size_t> ctx_loads;
  for (std::size_t i = 0; i < insns_.size(); ++i) {
    if (ptr_use_[i] == PtrUse::kCtx && insn_class(insns_[i].code) == BPF_LDX)
      ctx_loads.push_back(i);
  }
  if (options_.ctx_layout) {
    auto rewritten = rewrite_ctx_loads(insns_, ctx_loads, *options_.ctx_layout);
    if (!rewritten) return log_.reject_verbatim(rewritten.error().code, rewritten.error().message);
    result_.insns = std::move(rewritten.value());
  } else {
    result_.insns.assign(insns_.begin(), insns_.end());
  }
  return 0;
}

int Checker::walk() {
  std::uint32_t idx = 0;
  for (;;) {
    if (++processed_ > kInsnLimit) {
      log_.stopped_at(idx);
      return log_.reject(E2BIG, "BPF program is too large. Processed %" PRIu64 " insn", processed_);
    }
    bool path_end = false;
    if (shape_.prune_point[idx]) {
      if (int err = is_state_visited(idx, path_end)) {
        log_.stopped_at(idx);
        return err;
      }
    }
    if (!path_end) {
      log_.insn(idx, cur_);
      const Insn& in = insns_[idx];
      std::uint32_t next = idx + 1;
      last_stack_spi_ = -1;
      const std::uint8_t cls = insn_class(in.code);
      int err = 0;
      switch (cls) {
        case BPF_ALU:
        case BPF_ALU64:
          err = do_alu(in);
          break;
        case BPF_LDX:
          err = do_ldx(idx, in);
          break;
        case BPF_STX:
        case BPF_ST:
          err = do_store(idx, in);
          break;
        case BPF_LD:
          if (insn_mode(in.code) == BPF_ABS || insn_mode(in.code) == BPF_IND) {
            err = log_.reject(EINVAL,
                              "BPF_LD_[ABS|IND] instructions not allowed for this program type");
          } else {
            err = do_lddw(in, insns_[idx + 1]);
            next = idx + 2;
          }
          break;
        default: {  // JMP, JMP32
          ++jmps_processed_;
          const std::uint8_t op = insn_op(in.code);
          if (op == BPF_CALL) {
            err = do_call(idx, in, next);
          } else if (op == BPF_EXIT) {
            if (cls == BPF_JMP32 || in.src_reg || in.dst_reg || in.off || in.imm) {
              err = log_.reject(EINVAL, "BPF_EXIT uses reserved fields");
            } else {
              err = do_exit(next, path_end);
            }
          } else if (op == BPF_JA) {
            if (in.src_reg || in.dst_reg || (cls == BPF_JMP ? in.imm != 0 : in.off != 0)) {
              err = log_.reject(EINVAL, "BPF_JA uses reserved fields");
            } else {
              next = static_cast<std::uint32_t>(static_cast<std::int64_t>(idx) + 1 +
                                                (cls == BPF_JMP ? in.off : in.imm));
            }
          } else {
            err = do_cond_jmp(idx, in, next);
          }
          break;
        }
      }
      if (err) return err;
      HistoryEntry entry;
      entry.insn_idx = idx;
      entry.prev = history_tail_;
      entry.stack_spi = last_stack_spi_;
      entry.stack_frame = last_stack_frame_;
      history_.push_back(entry);
      history_tail_ = static_cast<std::int32_t>(history_.size() - 1);
      if (!path_end) {
        idx = next;
        continue;
      }
    }
    // The path ended (exit of the main program, or pruned): continue with a pending one.
    end_path();
    if (pending_.empty()) return 0;
    PendingPath p = std::move(pending_.back());
    pending_.pop_back();
    cur_ = std::move(p.state);
    cur_parent_ = p.parent;
    history_tail_ = p.history;
    idx = p.insn_idx;
    log_.path_start(p.from_idx, p.insn_idx, cur_);
  }
}

void Checker::end_path() {
  for (Checkpoint* node = cur_parent_; node; node = node->parent) {
    if (--node->branches > 0) break;
  }
  cur_parent_ = nullptr;
}

int Checker::push_branch(std::uint32_t target, std::uint32_t from) {
  if (pending_.size() >= kJmpSeqLimit) {
    return log_.reject(E2BIG, "The sequence of %zu jumps is too complex.", pending_.size() + 1);
  }
  if (cur_parent_) ++cur_parent_->branches;
  pending_.push_back(PendingPath{cur_, cur_parent_, target, from, history_tail_});
  return 0;
}

bool Checker::states_equal(const VerifierState& o, const VerifierState& c, std::uint32_t idx,
                           bool exact) {
  if (o.frames.size() != c.frames.size()) return false;
  IdMap ids;
  for (std::size_t f = 0; f < o.frames.size(); ++f) {
    const FuncState& of = o.frames[f];
    const FuncState& cf = c.frames[f];
    if (of.callsite != cf.callsite) return false;
    std::uint16_t live = 0xffff;
    if (f + 1 == o.frames.size()) {
      live = shape_.live_in[idx];
    } else {
      const auto ret = static_cast<std::size_t>(o.frames[f + 1].callsite) + 1;
      live = static_cast<std::uint16_t>(shape_.live_in[ret] & 0x7c0);  // r6-r10
    }
    for (int r = 0; r < kNumRegs; ++r) {
      if (!(live & bit(r))) continue;
      if (!reg_safe(of.regs[static_cast<std::size_t>(r)], cf.regs[static_cast<std::size_t>(r)], ids,
                    exact)) {
        return false;
      }
    }
    if (!stack_safe(of, cf, ids, exact)) return false;
  }
  return true;
}

int Checker::is_state_visited(std::uint32_t idx, bool& pruned) {
  bool add_new = jmps_processed_ - prev_jmps_ >= 2 && processed_ - prev_insns_ >= 8;
  auto& list = checkpoints_[idx];
  for (std::size_t i = 0; i < list.size();) {
    Checkpoint& cp = *list[i];
    if (cp.branches > 0) {
      // A state still being explored: we are in a loop back to it.
      if (states_equal(cp.state, cur_, idx, true)) {
        const int err = log_.reject(EINVAL, "infinite loop detected at insn %u", idx);
        log_.add_state_to_reason("cur state: ", cur_);
        log_.add_state_to_reason("old state: ", cp.state);
        return err;
      }
      if (jmps_processed_ - prev_jmps_ < 20 && processed_ - prev_insns_ < 100) add_new = false;
    } else if (states_equal(cp.state, cur_, idx, false)) {
      pruned = true;
      ++cp.hits;
      propagate_precision(cp.state, idx);
      log_.pruned(idx);
      return 0;
    }
    // A state that rarely prunes anything is dropped from the list (the kernel's heuristic);
    // it stays alive while paths or the history refer to it.
    if (add_new) ++cp.misses;
    if (cp.misses > cp.hits * 3 + 3) {
      evicted_.push_back(std::move(list[i]));
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
      --live_states_;
      continue;
    }
    ++i;
  }
  if (!add_new) return 0;
  prev_jmps_ = jmps_processed_;
  prev_insns_ = processed_;
  auto cp = std::make_unique<Checkpoint>();
  cp->state = cur_;
  cp->parent = cur_parent_;
  cp->branches = 1;
  cur_parent_ = cp.get();
  HistoryEntry entry;
  entry.insn_idx = idx;
  entry.prev = history_tail_;
  entry.checkpoint = cp.get();
  history_.push_back(entry);
  history_tail_ = static_cast<std::int32_t>(history_.size() - 1);
  mark_all_imprecise(cur_);
  checkpoints_[idx].push_back(std::move(cp));
  ++total_states_;
  peak_states_ = std::max(peak_states_, ++live_states_);
  return 0;
}

// ---------------------------------------------------------------- precision

void Checker::need_precise_reg(int r) {
  if (!reg(r).is_scalar()) return;
  PrecisionSet need;
  need.regs[cur_.frames.size() - 1] = bit(r);
  mark_precise(insns_, history_, history_tail_, cur_.frames.size() - 1, need);
}

void Checker::need_precise_slot(std::uint8_t frame_no, std::size_t spi) {
  PrecisionSet need;
  need.slots[frame_no] = 1ULL << spi;
  mark_precise(insns_, history_, history_tail_, cur_.frames.size() - 1, need);
}

// Pruned against `old`: what was precise there must be precise on this path too.
void Checker::propagate_precision(const VerifierState& old, std::uint32_t idx) {
  PrecisionSet need;
  for (std::size_t f = 0; f < old.frames.size(); ++f) {
    const FuncState& of = old.frames[f];
    const std::uint16_t live =
        f + 1 == old.frames.size()
            ? shape_.live_in[idx]
            : static_cast<std::uint16_t>(
                  shape_.live_in[static_cast<std::size_t>(old.frames[f + 1].callsite) + 1] & 0x7c0);
    for (int r = 0; r < kNumRegs; ++r) {
      const RegState& o = of.regs[static_cast<std::size_t>(r)];
      if ((live & bit(r)) && o.is_scalar() && o.precise) need.regs[f] |= bit(r);
    }
    for (std::size_t spi = 0; spi < of.stack.size(); ++spi) {
      const StackSlot& s = of.stack[spi];
      if (s.type[7] == StackByte::kSpill && s.spilled.is_scalar() && s.spilled.precise) {
        need.slots[f] |= 1ULL << spi;
      }
    }
  }
  if (!need.empty()) mark_precise(insns_, history_, history_tail_, cur_.frames.size() - 1, need);
}

// ---------------------------------------------------------------- registers

int Checker::check_read(int r) {
  if (r >= kNumRegs) return log_.reject(EINVAL, "R%d is invalid", r);
  if (reg(r).type == RegType::kNotInit) return log_.reject(EACCES, "R%d !read_ok", r);
  return 0;
}

int Checker::check_write(int r) {
  if (r >= kNumRegs) return log_.reject(EINVAL, "R%d is invalid", r);
  if (r == kFramePointer) return log_.reject(EACCES, "frame pointer is read only");
  return 0;
}

// ---------------------------------------------------------------- ALU

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
  RegState copy = src;
  copy.id = 0;
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
  out.s32_min = std::numeric_limits<std::int32_t>::min();
  out.s32_max = std::numeric_limits<std::int32_t>::max();
  out.u32_min = 0;
  out.u32_max = 0xffffffffU;
  switch (op) {
    case BPF_ADD: {
      const std::int64_t fixed = static_cast<std::int64_t>(ptr.off) + off.smin;
      if (known && fixed == static_cast<std::int32_t>(fixed)) {
        out.off = static_cast<std::int32_t>(fixed);
        break;
      }
      if (__builtin_add_overflow(ptr.smin, off.smin, &out.smin) ||
          __builtin_add_overflow(ptr.smax, off.smax, &out.smax)) {
        out.smin = std::numeric_limits<std::int64_t>::min();
        out.smax = std::numeric_limits<std::int64_t>::max();
      }
      if (__builtin_add_overflow(ptr.umin, off.umin, &out.umin) ||
          __builtin_add_overflow(ptr.umax, off.umax, &out.umax)) {
        out.umin = 0;
        out.umax = ~0ULL;
      }
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
      if (__builtin_sub_overflow(ptr.smin, off.smax, &out.smin) ||
          __builtin_sub_overflow(ptr.smax, off.smin, &out.smax)) {
        out.smin = std::numeric_limits<std::int64_t>::min();
        out.smax = std::numeric_limits<std::int64_t>::max();
      }
      if (ptr.umin < off.umax) {
        out.umin = 0;
        out.umax = ~0ULL;
      } else {
        out.umin = ptr.umin - off.umax;
        out.umax = ptr.umax - off.umin;
      }
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

// ---------------------------------------------------------------- memory

StackSlot& Checker::slot(FuncState& f, std::size_t spi) {
  if (f.stack.size() <= spi) f.stack.resize(spi + 1);
  return f.stack[spi];
}

void Checker::note_stack_depth(const RegState& ptr, std::int64_t min_off) {
  const FuncState& f = cur_.frames[ptr.frameno];
  auto& depth = subprog_depth_[f.subprog];
  if (min_off < 0 && static_cast<std::uint32_t>(-min_off) > depth) {
    depth = static_cast<std::uint32_t>(-min_off);
  }
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
  auto in_bounds = [&](std::int64_t o) {
    const bool size_ok = size > 0 || (zero_ok && size == 0);
    return o >= 0 && size_ok &&
           static_cast<std::uint64_t>(o) + static_cast<std::uint64_t>(size) <= map.value_size;
  };
  auto bad = [&](std::int64_t o) {
    return log_.reject(EACCES, "invalid access to map value, value_size=%u off=%" PRId64 " size=%d",
                       map.value_size, o, size);
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

int Checker::check_ctx_access(int regno, int off, int size, bool write) {
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
  const PtrUse use = ptr.type == RegType::kPtrToCtx ? PtrUse::kCtx : PtrUse::kOther;
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
  if (int err = check_mem_access(idx, in.src_reg, in.off, access_bytes(in.code), false, nullptr, 0,
                                 false, &out, insn_mode(in.code) == kModeMemsx)) {
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
    return check_mem_access(idx, in.dst_reg, in.off, access_bytes(in.code), true, &value, 0, false,
                            nullptr, false);
  }
  if (insn_mode(in.code) != BPF_MEM || in.src_reg != 0) {
    return log_.reject(EINVAL, "BPF_ST uses reserved fields");
  }
  if (int err = check_read(in.dst_reg)) return err;
  return check_mem_access(idx, in.dst_reg, in.off, access_bytes(in.code), true, nullptr, in.imm,
                          true, nullptr, false);
}

int Checker::do_atomic(std::uint32_t idx, const Insn& in) {
  const int size = access_bytes(in.code);
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
  RegState loaded;
  if (int err = check_mem_access(idx, in.dst_reg, in.off, size, false, nullptr, 0, false, &loaded,
                                 false, true)) {
    return err;
  }
  if (loaded.is_pointer() && fetch_rmw) {
    // Privileged loads may fetch a spilled pointer; its value becomes a scalar.
    loaded = make_unknown_scalar();
  }
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

// ---------------------------------------------------------------- jumps

void Checker::mark_null_checked(std::uint32_t id, bool is_null) {
  auto mark = [&](RegState& r) {
    if (r.type != RegType::kPtrToMapValue || !r.maybe_null || r.id != id) return;
    if (is_null) {
      r = make_known_scalar(0);
    } else {
      r.maybe_null = false;
      r.id = 0;
    }
  };
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

// ---------------------------------------------------------------- calls

std::int64_t Checker::const_map_key(const RegState& key, std::uint32_t key_size) {
  if (key.type != RegType::kPtrToStack || !key.var_off.is_const()) return -1;
  const std::int64_t off = key.off + static_cast<std::int64_t>(key.var_off.value);
  if (off >= 0 || off < -kMaxStack) return -1;
  FuncState& f = cur_.frames[key.frameno];
  const auto byte_slot = static_cast<std::size_t>(-off - 1);
  const std::size_t spi = byte_slot / 8;
  if (spi >= f.stack.size()) return -1;
  const StackSlot& s = f.stack[spi];
  std::uint32_t zero = 0;
  for (int i = static_cast<int>(byte_slot % 8);
       i >= 0 && s.type[static_cast<std::size_t>(i)] == StackByte::kZero; --i) {
    ++zero;
  }
  if (zero >= key_size) return 0;
  if (s.type[7] != StackByte::kSpill || !s.spilled.is_scalar()) return -1;
  std::uint32_t spill = 0;
  for (int i = static_cast<int>(byte_slot % 8);
       i >= 0 && s.type[static_cast<std::size_t>(i)] == StackByte::kSpill; --i) {
    ++spill;
  }
  if (spill != key_size || !s.spilled.var_off.is_const()) return -1;
  need_precise_slot(key.frameno, spi);
  return static_cast<std::int64_t>(s.spilled.var_off.value);
}

int Checker::check_helper_mem(int regno, std::uint64_t size, bool write, bool zero_ok,
                              CallMeta& meta) {
  const RegState ptr = reg(regno);
  const int isize = static_cast<int>(size);
  if (ptr.type == RegType::kPtrToStack) {
    std::int64_t min_off = 0;
    std::int64_t max_off = 0;
    if (size == 0 && zero_ok) return 0;
    if (int err =
            check_stack_bounds(regno, ptr, 0, isize, " indirect access to", min_off, max_off)) {
      return err;
    }
    if (write) {
      meta.raw_regno = regno;
      meta.raw_size = size;
    } else {
      // Privileged: uninitialized bytes and spilled pointers may be read.
      FuncState& f = cur_.frames[ptr.frameno];
      if (f.stack.size() * 8 < static_cast<std::size_t>(-min_off)) {
        f.stack.resize(static_cast<std::size_t>((-min_off + 7) / 8));
      }
    }
    return 0;
  }
  if (ptr.type == RegType::kPtrToMapValue && !ptr.maybe_null) {
    return check_map_value_access(regno, ptr, 0, isize, write, zero_ok);
  }
  return log_.reject(EACCES, "R%d type=%s expected=fp, map_value", regno, reg_type_name(ptr));
}

int Checker::check_helper_arg(int regno, ArgType type, CallMeta& meta, ArgType prev) {
  if (int err = check_read(regno)) return err;
  const RegState r = reg(regno);
  auto expect = [&](const char* what) {
    return log_.reject(EACCES, "R%d type=%s expected=%s", regno, reg_type_name(r), what);
  };
  switch (type) {
    case ArgType::kNone:
    case ArgType::kAnything:
      return 0;
    case ArgType::kPtrToCtx:
      if (r.type != RegType::kPtrToCtx) return expect("ctx");
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
    case ArgType::kConstMapPtr:
      if (r.type != RegType::kConstPtrToMap) return expect("map_ptr");
      meta.map = r.map;
      return 0;
    case ArgType::kPtrToMapKey:
    case ArgType::kPtrToMapValue: {
      if (r.type != RegType::kPtrToStack && (r.type != RegType::kPtrToMapValue || r.maybe_null)) {
        return expect("fp, pkt, pkt_meta, map_key, map_value, mem, ringbuf_mem, buf, trusted_ptr_");
      }
      const bool is_key = type == ArgType::kPtrToMapKey;
      if (meta.map < 0) {
        return log_.reject(EACCES, "invalid map_ptr to access map->%s", is_key ? "key" : "value");
      }
      const MapSpec& map = (*options_.maps)[static_cast<std::size_t>(meta.map)];
      const std::uint32_t size = is_key ? map.key_size : map.value_size;
      if (int err = check_helper_mem(regno, size, false, false, meta)) return err;
      if (is_key && (map.type == BPF_MAP_TYPE_ARRAY || map.type == BPF_MAP_TYPE_PERCPU_ARRAY)) {
        meta.const_map_key = const_map_key(r, size);
      }
      return 0;
    }
    case ArgType::kPtrToMem:
    case ArgType::kPtrToUninitMem:
      if (r.type != RegType::kPtrToStack && (r.type != RegType::kPtrToMapValue || r.maybe_null)) {
        return expect("fp, pkt, pkt_meta, map_key, map_value, mem, ringbuf_mem, buf, trusted_ptr_");
      }
      meta.mem_regno = regno;
      meta.mem_write = type == ArgType::kPtrToUninitMem;
      return 0;
    case ArgType::kConstSize:
    case ArgType::kConstSizeOrZero: {
      if (r.type != RegType::kScalar) return expect("scalar");
      const bool zero_ok = type == ArgType::kConstSizeOrZero;
      if (r.smin < 0) {
        return log_.reject(
            EACCES, "R%d min value is negative, either use unsigned or 'var &= const'", regno);
      }
      if (r.umin == 0 && !zero_ok) {
        return log_.reject(EACCES, "R%d invalid zero-sized read: u64=[%" PRIu64 ",%" PRIu64 "]",
                           regno, r.umin, r.umax);
      }
      if (r.umax >= kMaxVarSize) {
        return log_.reject(
            EACCES, "R%d unbounded memory access, use 'var &= const' or 'if (var < const)'", regno);
      }
      meta.msize_max = r.umax;
      need_precise_reg(regno);
      if (prev != ArgType::kPtrToMem && prev != ArgType::kPtrToUninitMem) return 0;
      return check_helper_mem(regno - 1, r.umax, meta.mem_write, zero_ok, meta);
    }
    default:
      return log_.reject(EINVAL, "unsupported arg type for R%d", regno);
  }
}

int Checker::check_map_compat(int map_index, std::int32_t helper) {
  if (map_index < 0) return 0;
  const MapSpec& map = (*options_.maps)[static_cast<std::size_t>(map_index)];
  bool ok = true;
  switch (map.type) {
    case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
      ok = helper == BPF_FUNC_perf_event_read || helper == BPF_FUNC_perf_event_output ||
           helper == BPF_FUNC_perf_event_read_value;
      break;
    case BPF_MAP_TYPE_RINGBUF:
      ok = helper == BPF_FUNC_ringbuf_output;
      break;
    case BPF_MAP_TYPE_STACK_TRACE:
      ok = helper == BPF_FUNC_get_stackid;
      break;
    case BPF_MAP_TYPE_QUEUE:
    case BPF_MAP_TYPE_STACK:
      ok = helper == BPF_FUNC_map_push_elem || helper == BPF_FUNC_map_pop_elem ||
           helper == BPF_FUNC_map_peek_elem;
      break;
    default:
      break;
  }
  switch (helper) {
    case BPF_FUNC_perf_event_read:
    case BPF_FUNC_perf_event_output:
    case BPF_FUNC_perf_event_read_value:
      ok = ok && map.type == BPF_MAP_TYPE_PERF_EVENT_ARRAY;
      break;
    case BPF_FUNC_ringbuf_output:
      ok = ok && map.type == BPF_MAP_TYPE_RINGBUF;
      break;
    case BPF_FUNC_get_stackid:
      ok = ok && map.type == BPF_MAP_TYPE_STACK_TRACE;
      break;
    case BPF_FUNC_map_push_elem:
    case BPF_FUNC_map_pop_elem:
    case BPF_FUNC_map_peek_elem:
      ok = ok && (map.type == BPF_MAP_TYPE_QUEUE || map.type == BPF_MAP_TYPE_STACK);
      break;
    default:
      break;
  }
  if (!ok) {
    return log_.reject(EINVAL, "cannot pass map_type %u into func %s#%d", map.type,
                       helper_label(helper), helper);
  }
  return 0;
}

int Checker::do_call(std::uint32_t idx, const Insn& in, std::uint32_t& next) {
  if (insn_source(in.code) != BPF_K || in.off != 0 ||
      (in.src_reg != 0 && in.src_reg != BPF_PSEUDO_CALL) || in.dst_reg != 0 ||
      insn_class(in.code) == BPF_JMP32) {
    return log_.reject(EINVAL, "BPF_CALL uses reserved fields");
  }
  if (in.src_reg == BPF_PSEUDO_CALL) return do_local_call(idx, in, next);
  const std::int32_t id = in.imm;
  if (id < 0 || id >= kHelperIdLimit)
    return log_.reject(EINVAL, "invalid func %s#%d", helper_label(id), id);
  if (id == BPF_FUNC_get_func_ip) return check_get_func_ip(id);
  const HelperProto* proto = perf_event_helper_proto(id);
  if (!proto) {
    return log_.reject(EINVAL, "program of this type cannot use helper %s#%d", helper_label(id),
                       id);
  }
  if (proto->gpl_only && !options_.gpl_compatible) {
    return log_.reject(EINVAL,
                       "cannot call GPL-restricted function from non-GPL compatible program");
  }
  CallMeta meta;
  ArgType prev = ArgType::kNone;
  for (int a = 0; a < 5 && proto->args[a] != ArgType::kNone; ++a) {
    if (int err = check_helper_arg(a + 1, proto->args[a], meta, prev)) return err;
    prev = proto->args[a];
  }
  if (int err = check_map_compat(meta.map, id)) return err;
  // Memory the helper writes: every byte becomes initialized data.
  if (meta.raw_regno >= 0 && meta.raw_size > 0) {
    const RegState ptr = reg(meta.raw_regno);
    const std::int64_t base = ptr.off;
    const std::int64_t lo = ptr.var_off.is_const()
                                ? base + static_cast<std::int64_t>(ptr.var_off.value)
                                : base + ptr.smin;
    const std::int64_t hi =
        (ptr.var_off.is_const() ? lo : base + ptr.smax) + static_cast<std::int64_t>(meta.raw_size);
    stack_mark_misc(cur_.frames[ptr.frameno], lo, std::min<std::int64_t>(hi, 0), false);
  }
  for (int r = 1; r <= 5; ++r) reg(r) = RegState{};
  RegState& r0 = reg(0);
  switch (proto->ret) {
    case RetType::kVoid:
      r0 = RegState{};
      break;
    case RetType::kInteger:
      r0 = make_unknown_scalar();
      if (id == BPF_FUNC_get_stack || id == BPF_FUNC_probe_read_str ||
          id == BPF_FUNC_probe_read_kernel_str || id == BPF_FUNC_probe_read_user_str) {
        r0.smax = static_cast<std::int64_t>(meta.msize_max);
        r0.s32_max = static_cast<std::int32_t>(meta.msize_max);
        r0.smin = -kMaxErrno;
        r0.s32_min = -kMaxErrno;
        reg_bounds_sync(r0);
      }
      break;
    case RetType::kPtrToMapValueOrNull: {
      r0 = make_pointer(RegType::kPtrToMapValue);
      r0.map = static_cast<std::int16_t>(meta.map);
      const MapSpec& map = (*options_.maps)[static_cast<std::size_t>(meta.map)];
      const bool elide = id == BPF_FUNC_map_lookup_elem && meta.const_map_key >= 0 &&
                         meta.const_map_key < static_cast<std::int64_t>(map.max_entries);
      if (!elide) {
        r0.maybe_null = true;
        r0.id = ++id_gen_;
      }
      break;
    }
  }
  next = idx + 1;
  return 0;
}

// The kernel offers bpf_get_func_ip to every tracing type, then refuses it for perf_event
// programs once the arguments are checked (check_get_func_ip).
int Checker::check_get_func_ip(std::int32_t id) {
  if (!options_.gpl_compatible) {
    return log_.reject(EINVAL,
                       "cannot call GPL-restricted function from non-GPL compatible program");
  }
  CallMeta meta;
  if (int err = check_helper_arg(1, ArgType::kPtrToCtx, meta, ArgType::kNone)) return err;
  return log_.reject(kENOTSUPP, "func %s#%d not supported for program type %u", helper_label(id),
                     id, options_.prog_type);
}

int Checker::do_local_call(std::uint32_t idx, const Insn& in, std::uint32_t& next) {
  if (cur_.frames.size() >= static_cast<std::size_t>(kMaxCallFrames)) {
    return log_.reject(E2BIG, "the call stack of %zu frames is too deep", cur_.frames.size() + 1);
  }
  const auto target = static_cast<std::uint32_t>(static_cast<std::int64_t>(idx) + in.imm + 1);
  FuncState callee;
  callee.callsite = static_cast<std::int32_t>(idx);
  callee.subprog = shape_.subprog_of[target];
  callee.frameno = static_cast<std::uint8_t>(cur_.frames.size());
  for (int r = 1; r <= 5; ++r) callee.regs[static_cast<std::size_t>(r)] = reg(r);
  callee.regs[kFramePointer] = make_pointer(RegType::kPtrToStack);
  callee.regs[kFramePointer].frameno = callee.frameno;
  for (int r = 0; r <= 5; ++r) reg(r) = RegState{};
  cur_.frames.push_back(std::move(callee));
  next = target;
  return 0;
}

int Checker::do_exit(std::uint32_t& next, bool& path_end) {
  if (cur_.frames.size() > 1) {
    const RegState r0 = reg(0);
    if (r0.type == RegType::kPtrToStack) {
      return log_.reject(EINVAL, "cannot return stack pointer to the caller frame");
    }
    const auto callsite = static_cast<std::uint32_t>(frame().callsite);
    cur_.frames.pop_back();
    reg(0) = r0;
    next = callsite + 1;
    return 0;
  }
  // PERF_EVENT programs may return any initialized value (privileged: pointers too).
  if (reg(0).type == RegType::kNotInit) return log_.reject(EACCES, "R0 !read_ok");
  path_end = true;
  return 0;
}

// ---------------------------------------------------------------- stack depth

int Checker::check_max_stack_depth() {
  // Every call chain of the static call graph. The x86-64 JIT gives perf_event programs private
  // stacks (Linux 6.13+): a frame of 64 bytes or more lives in its own and counts only against
  // its own limit; the smaller ones share the program stack and must fit MAX_BPF_STACK together.
  // stack_depth reports the whole chain, private frames included.
  std::vector<std::vector<std::uint16_t>> callees(shape_.subprogs.size());
  for (std::size_t i = 0; i < insns_.size(); ++i) {
    const Insn& in = insns_[i];
    if (in.code == (BPF_JMP | BPF_CALL) && in.src_reg == BPF_PSEUDO_CALL) {
      const auto target = static_cast<std::size_t>(static_cast<std::int64_t>(i) + in.imm + 1);
      callees[shape_.subprog_of[i]].push_back(shape_.subprog_of[target]);
    }
  }
  auto rounded = [&](std::size_t s) {
    return (subprog_depth_[s] + kStackRound - 1) / kStackRound * kStackRound;
  };
  std::uint32_t deepest = 0;
  struct Frame {
    std::uint16_t subprog;
    std::size_t next_callee;
    std::uint32_t depth;   // every frame of the chain
    std::uint32_t shared;  // the frames on the program stack
  };
  auto shared = [&](std::size_t s) { return rounded(s) >= kPrivateStackMin ? 0 : rounded(s); };
  std::vector<Frame> chain{{0, 0, rounded(0), shared(0)}};
  while (!chain.empty()) {
    Frame& top = chain.back();
    if (top.shared > static_cast<std::uint32_t>(kMaxStack)) {
      return log_.reject(EACCES, "combined stack size of %zu calls is %u. Too large", chain.size(),
                         top.shared);
    }
    deepest = std::max(deepest, top.depth);
    if (top.next_callee >= callees[top.subprog].size()) {
      chain.pop_back();
      continue;
    }
    const std::uint16_t callee = callees[top.subprog][top.next_callee++];
    if (chain.size() >= static_cast<std::size_t>(kMaxCallFrames)) {
      return log_.reject(E2BIG, "the call stack of %zu frames is too deep !", chain.size() + 1);
    }
    const std::uint32_t depth = top.depth + rounded(callee);
    const std::uint32_t on_shared = top.shared + shared(callee);
    chain.push_back({callee, 0, depth, on_shared});
  }
  result_.stack_depth = deepest;
  return 0;
}

}  // namespace

VerifyResult verify(const ProgramImage& program, const VerifyOptions& options) {
  VerifyResult result;
  Checker checker(program.insns, options, result);
  const int err = checker.run();
  result.accepted = err == 0;
  result.error = err;
  if (err) result.insns.clear();
  return result;
}

}  // namespace userperf::bpf
