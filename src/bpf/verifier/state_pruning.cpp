// State pruning (the kernel's is_state_visited and states_equal): at prune points the current
// state is compared with the checkpoints kept there; a path whose state an old, fully explored one
// contains ends. What was precise in the old state must be made precise on the pruned path.
#include "bpf/verifier/checker.hpp"
#include "bpf/verifier/program_shape.hpp"

#include <algorithm>
#include <cerrno>
#include <memory>
#include <utility>

namespace userperf::bpf {
namespace {

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
bool reg_safe(const RegState& o, const RegState& c, IdMap& ids, StateCompare mode) {
  if (mode == StateCompare::kExact) return regs_exact(o, c, ids);
  if (o.type == RegType::kNotInit) return true;
  if (o.type != c.type || o.maybe_null != c.maybe_null) return false;
  switch (o.type) {
    case RegType::kScalar:
      // Its value decided nothing on the old paths (unless they are still being explored).
      if (!o.precise && mode != StateCompare::kRangeWithin) return true;
      if (regs_exact(o, c, ids)) return true;
      if (!ids.check_scalar(o.id, c.id)) return false;
      return range_within(o, c) && o.var_off.contains(c.var_off);
    case RegType::kPtrToMapValue:
      return o.off == c.off && o.map == c.map && range_within(o, c) &&
             o.var_off.contains(c.var_off) && ids.check(o.id, c.id);
    case RegType::kPtrToRingbufMem:
    case RegType::kPtrToMem:
      return o.off == c.off && o.mem_size == c.mem_size && o.ref_obj_id == c.ref_obj_id &&
             range_within(o, c) && o.var_off.contains(c.var_off) && ids.check(o.id, c.id);
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

bool stack_safe(const FuncState& o, const FuncState& c, IdMap& ids, StateCompare mode) {
  const bool exact = mode == StateCompare::kExact;
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
      if (!reg_safe(*os, *cs, ids, mode)) return false;
      i += 7 - (i % 8);
      continue;
    }
    if (ob != cb) return false;
    if (i % 8 == 7 && ob == StackByte::kSpill &&
        !reg_safe(o.stack[spi].spilled, c.stack[spi].spilled, ids, mode)) {
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

// The registers of frame f that later instructions may read when `state` is at insn idx: those
// live at idx in the current frame; in a caller, its callee-saved r6-r10 live at the return, and
// for a callback's caller all that are live at the helper call it returns to.
std::uint16_t live_regs(const ProgramShape& shape, const VerifierState& state, std::size_t f,
                        std::uint32_t idx) {
  if (f + 1 == state.frames.size()) return shape.live_in[idx];
  const FuncState& callee = state.frames[f + 1];
  if (callee.in_callback) return shape.live_in[static_cast<std::size_t>(callee.callsite)];
  const auto ret = static_cast<std::size_t>(callee.callsite) + 1;
  return static_cast<std::uint16_t>(shape.live_in[ret] & 0x7c0);  // r6-r10
}

}  // namespace

bool Checker::states_equal(const VerifierState& o, const VerifierState& c, std::uint32_t idx,
                           StateCompare mode) {
  if (o.frames.size() != c.frames.size()) return false;
  // refsafe, stricter than the kernel's: the same references under the same ids.
  if (o.refs != c.refs) return false;
  IdMap ids;
  for (std::size_t f = 0; f < o.frames.size(); ++f) {
    const FuncState& of = o.frames[f];
    const FuncState& cf = c.frames[f];
    if (of.callsite != cf.callsite) return false;
    // The old state could still enter its callback more often than the current one.
    if (of.callback_depth > cf.callback_depth) return false;
    const std::uint16_t live = live_regs(shape_, o, f, idx);
    for (int r = 0; r < kNumRegs; ++r) {
      if (!(live & reg_bit(r))) continue;
      if (!reg_safe(of.regs[static_cast<std::size_t>(r)], cf.regs[static_cast<std::size_t>(r)], ids,
                    mode)) {
        return false;
      }
    }
    if (!stack_safe(of, cf, ids, mode)) return false;
  }
  return true;
}

int Checker::is_state_visited(std::uint32_t idx, bool& pruned) {
  // A callback-calling helper call always gets a checkpoint: the next iteration of its callback
  // is compared with it.
  const bool callback_call = calls_callback(insns_[idx]);
  bool add_new =
      callback_call || (jmps_processed_ - prev_jmps_ >= 2 && processed_ - prev_insns_ >= 8);
  auto& list = checkpoints_[idx];
  for (std::size_t i = 0; i < list.size();) {
    Checkpoint& cp = *list[i];
    if (cp.branches > 0 && callback_call) {
      // An earlier iteration of the callback, still being explored: the iterations converged
      // when the current state lies within it.
      if (states_equal(cp.state, cur_, idx, StateCompare::kRangeWithin)) {
        pruned = true;
        ++cp.hits;
        propagate_precision(cp.state, idx);
        log_.pruned(idx);
        return 0;
      }
    } else if (cp.branches > 0) {
      // A state still being explored: we are in a loop back to it (unless a callback was entered
      // again in between: then it is the callback's next iteration).
      if (cp.state.callback_unroll_depth == cur_.callback_unroll_depth &&
          states_equal(cp.state, cur_, idx, StateCompare::kExact)) {
        const int err = log_.reject(EINVAL, "infinite loop detected at insn %u", idx);
        log_.add_state_to_reason("cur state: ", cur_);
        log_.add_state_to_reason("old state: ", cp.state);
        return err;
      }
      if (jmps_processed_ - prev_jmps_ < 20 && processed_ - prev_insns_ < 100) add_new = false;
    } else if (states_equal(cp.state, cur_, idx, StateCompare::kNotExact)) {
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

// After a callback's exit, against the state the helper call had on the previous iteration:
// scalars that changed and whose value decided nothing become unknown.
void Checker::widen_imprecise_scalars(const VerifierState& old, VerifierState& cur) {
  auto widen = [](const RegState& o, RegState& c) {
    if (o.type != RegType::kScalar || c.type != RegType::kScalar || o.precise || c.precise) return;
    IdMap ids;
    if (regs_exact(o, c, ids)) return;
    c = make_unknown_scalar();
  };
  for (std::size_t f = 0; f < cur.frames.size() && f < old.frames.size(); ++f) {
    const FuncState& of = old.frames[f];
    FuncState& cf = cur.frames[f];
    for (std::size_t r = 0; r < cf.regs.size(); ++r) widen(of.regs[r], cf.regs[r]);
    for (std::size_t spi = 0; spi < cf.stack.size() && spi < of.stack.size(); ++spi) {
      if (!is_spilled_scalar64(of.stack[spi]) || !is_spilled_scalar64(cf.stack[spi])) continue;
      widen(of.stack[spi].spilled, cf.stack[spi].spilled);
    }
  }
}

// ---- precision

void Checker::need_precise_reg(int r) {
  if (!reg(r).is_scalar()) return;
  PrecisionSet need;
  need.regs[cur_.frames.size() - 1] = reg_bit(r);
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
    const std::uint16_t live = live_regs(shape_, old, f, idx);
    for (int r = 0; r < kNumRegs; ++r) {
      const RegState& o = of.regs[static_cast<std::size_t>(r)];
      if ((live & reg_bit(r)) && o.is_scalar() && o.precise) need.regs[f] |= reg_bit(r);
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

}  // namespace userperf::bpf
